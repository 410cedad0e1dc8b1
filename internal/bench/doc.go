// Package bench drives a running cluster and measures it: `rocketraft bench
// produce` (the project's native remoting client or the official
// rocketmq-client-go) and `rocketraft bench consume` (the rocketmq-go push
// consumer). `rocketraft bench disk` measures the floor under both, a
// directory's durable-append latency (disk.go). cmd/rocketraft's `bench`
// subcommand only parses flags into ProduceOptions, ConsumeOptions and
// DiskOptions.
//
// # What a run reports
//
// A line each second (msgs/s, MB/s of message bodies, p50/p99/p999/max of
// every latency series, totals) and at the end a summary: the line scripts
// grep ("summary: N ok, M failed in …"), then per series a percentile table
// and a log-scale histogram. The same numbers go to --csv (one header, an
// "interval" row per second, a "total" row) and --json (JSON Lines: an
// "interval" object per second, a "summary" object with the options and the
// percentile tables); sink.go has the columns.
//
// Series: a producer records "latency" per send call; an open-loop run
// (--rate) measures it from the send's scheduled start, which corrects for
// coordinated omission (a stalled broker delays every send due meanwhile, and
// all of them count), and adds "service", the uncorrected time from the
// request going out. A consumer records "born" (now − BORN timestamp) and
// "store" (now − STORE timestamp) per message.
//
// # Concurrency
//
// Latencies go into HdrHistograms (hdrhistogram-go: fixed memory, 0.1%
// precision) owned by one recorder per worker (per producer; per queue shard
// for a consumer, whose callbacks run on the client's goroutines). A recorder's
// lock is taken by its own worker and, once a second, by the reporting
// goroutine, which swaps in empty histograms and merges the full ones into the
// interval and the run's totals outside the lock (recorder.go). The plan
// (schedule.go) hands out message numbers through one atomic counter.
//
// # Files, bottom up
//
//	options.go    options, their validation, errors
//	hist.go       histogram range, stats, percentile table, log buckets
//	recorder.go   per-worker recorder, meter (intervals, summary)
//	schedule.go   plan (closed / open loop), clock, workers
//	report.go     live line and summary text
//	sink.go       CSV and JSON Lines
//	outputs.go    --csv/--json files and "-"
//	run.go        Result, the reporting loop, the produce runner
//	message.go    what each message carries (tags, keys, delay, padding)
//	native.go     route → every write queue, native sends
//	native_tx.go  END_TRANSACTION and check-back answers
//	produce_go.go the rocketmq-go producer and transaction producer
//	produce.go    Produce
//	consume.go    Consume
//	disk.go       Disk: pwrite + fdatasync latency of a directory
//
// # Usage
//
//	res, err := bench.Produce(ctx, bench.ProduceOptions{Namesrv: []string{"127.0.0.1:9876"},
//		Topic: "T", Producers: 16, Count: 100000, MessageSize: 1024, Rate: 20000, Out: os.Stdout})
package bench
