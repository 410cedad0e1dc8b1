package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/bench"
)

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Load a running cluster with a producer or the rocketmq-client-go consumer"}
	// Flags that both subcommands have share a variable only when their
	// defaults agree (a second registration overwrites the first default).
	var namesrv, topic, csvPath, jsonPath, cpuProfile string
	var consumeBatch int
	var produceGroup, consumeGroup, produceTag, consumeTag, keyPrefix string
	var producers, count, size, batch, window, delayLevel, propertySize int
	var client, mode, serialize string
	var rate float64
	var transaction, keyRandom bool
	var duration, timeout time.Duration
	var creds credentialFlags
	var produceTLS, consumeTLS clientTLSFlags
	// outputs opens --csv and --json around a run; Ctrl-C ends the run
	// early, and it still reports what it did.
	outputs := func(cmd *cobra.Command, run func(context.Context, *bench.Outputs) error) error {
		outs, err := bench.OpenOutputs(csvPath, jsonPath, os.Stdout, os.Stderr)
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		// The load generator's live heap is a few MiB, so at the default GOGC
		// it collects many times a second and the collector was an eighth of
		// its CPU; a larger target costs tens of MiB and leaves the cores to
		// the brokers being measured. GOGC, when set, wins.
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(400)
		}
		if cpuProfile != "" {
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return errors.Join(err, outs.Close())
			}
			defer stopProfile()
		}
		err = run(ctx, outs)
		return errors.Join(err, outs.Close())
	}
	produce := &cobra.Command{
		Use:   "produce",
		Short: "Send messages and print msgs/s, MB/s and latency each second, then a summary with percentiles",
		RunE: func(cmd *cobra.Command, _ []string) error {
			tlsCfg, err := produceTLS.config()
			if err != nil {
				return err
			}
			st, err := bench.ParseSerialize(serialize)
			if err != nil {
				return err
			}
			return outputs(cmd, func(ctx context.Context, outs *bench.Outputs) error {
				_, err := bench.Produce(ctx, bench.ProduceOptions{
					Namesrv: strings.Split(namesrv, ";"), Topic: topic, Group: produceGroup, Producers: producers,
					Count: count, Duration: duration, MessageSize: size, Batch: batch,
					Client: bench.Client(client), Mode: bench.Mode(mode), Window: window, Rate: rate, Serialize: st,
					Tag: produceTag, KeyPrefix: keyPrefix, KeyRandom: keyRandom, DelayLevel: delayLevel, PropertySize: propertySize, Transaction: transaction,
					Credentials: creds.credentials(), TLS: tlsCfg, Out: outs.Live, CSV: outs.CSV, JSON: outs.JSON,
				})
				return err
			})
		},
	}
	consume := &cobra.Command{
		Use:   "consume",
		Short: "Consume a topic from the first offset with the rocketmq-go push consumer and measure what arrives",
		RunE: func(cmd *cobra.Command, _ []string) error {
			tlsCfg, err := consumeTLS.config()
			if err != nil {
				return err
			}
			return outputs(cmd, func(ctx context.Context, outs *bench.Outputs) error {
				_, err := bench.Consume(ctx, bench.ConsumeOptions{
					Namesrv: strings.Split(namesrv, ";"), Topic: topic, Group: consumeGroup, Tag: consumeTag, Batch: consumeBatch,
					Count: count, Duration: duration, Timeout: timeout,
					Credentials: creds.credentials(), TLS: tlsCfg, Out: outs.Live, CSV: outs.CSV, JSON: outs.JSON,
				})
				return err
			})
		},
	}
	for _, c := range []*cobra.Command{produce, consume} {
		f := c.Flags()
		f.StringVar(&namesrv, "namesrv", "127.0.0.1:9876", "nameserver addresses, ';'-separated")
		f.StringVar(&topic, "topic", "BenchTopic", "topic")
		f.IntVar(&count, "count", 0, "number of messages (0 = run for --duration)")
		f.DurationVar(&duration, "duration", 10*time.Second, "run time when --count is 0")
		f.StringVar(&csvPath, "csv", "", "also write a CSV row per second and a total row to this file ('-' = stdout; the live text then goes to stderr)")
		f.StringVar(&jsonPath, "json", "", "also write a JSON line per second and a summary line to this file ('-' = stdout; the live text then goes to stderr)")
		f.StringVar(&cpuProfile, "cpu-profile", "", "write a Go CPU profile of this bench process to this file (go tool pprof reads it)")
		creds.register(f)
	}
	produceTLS.register(produce.Flags(), true)
	consumeTLS.register(consume.Flags(), false)
	pf := produce.Flags()
	pf.StringVar(&produceGroup, "group", "rocketraft_bench_producer", "producer group")
	pf.IntVar(&producers, "producers", 16, "concurrent senders")
	pf.IntVar(&size, "size", 1024, "message body size in bytes")
	pf.IntVar(&batch, "batch", 1, "messages per send (>1 uses SEND_BATCH_MESSAGE)")
	pf.StringVar(&client, "client", "native", "native (this project's remoting client) or rocketmq-go (the official Go client)")
	pf.StringVar(&mode, "mode", "sync", "sync (one send at a time per producer) or async (--window sends in flight per producer; native client)")
	pf.IntVar(&window, "window", 32, "sends in flight per producer with --mode async")
	pf.StringVar(&serialize, "serialize", "json", "header encoding of the native client's requests: json or rocketmq (answered in kind, as Apache's brokers do); the official Go client speaks json")
	pf.Float64Var(&rate, "rate", 0, "open loop: messages per second over all producers, latency measured from each send's scheduled time (0 = closed loop)")
	pf.StringVar(&produceTag, "tag", "", "TAGS of every message (empty = none)")
	pf.StringVar(&keyPrefix, "key-prefix", "k", "message n gets KEYS <prefix>n, indexed by the broker (empty = no keys)")
	pf.BoolVar(&keyRandom, "key-random", false, "KEYS are <prefix> and 16 hex digits mixed from n, spread over the IndexFile's hash slots as business keys such as UUIDs are (<prefix>n keys hash to neighbouring slots)")
	pf.IntVar(&delayLevel, "delay-level", 0, "delay level 1-18 of every message (0 = not delayed)")
	pf.IntVar(&propertySize, "property-size", 0, "bytes of an extra user property ("+bench.PadProperty+") on every message")
	pf.BoolVar(&transaction, "transaction", false, "send every message as a transaction: half message, then commit")
	cf := consume.Flags()
	cf.StringVar(&consumeGroup, "group", "rocketraft_bench_consumer", "consumer group")
	cf.StringVar(&consumeTag, "tag", "", "subscribe to this tag expression, e.g. 'a || b' (empty = every message)")
	cf.IntVar(&consumeBatch, "batch", 1, "messages per listener call, 1-1024 (the client's ConsumeMessageBatchMaxSize; it runs a goroutine per call)")
	cf.DurationVar(&timeout, "timeout", time.Minute, "with --count: fail if fewer messages arrived within this long")
	cmd.AddCommand(produce, consume, newBenchDiskCommand())
	return cmd
}

// newBenchDiskCommand is `bench disk`: the durable-append latency under every
// acknowledged send, measured on the directory a broker would store in.
func newBenchDiskCommand() *cobra.Command {
	var o bench.DiskOptions
	var jsonPath string
	c := &cobra.Command{
		Use:   "disk",
		Short: "Measure a directory's durable-append latency (pwrite + fdatasync, as the raft log appends), the floor under every acknowledged send",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			outs, err := bench.OpenOutputs("", jsonPath, os.Stdout, os.Stderr)
			if err != nil {
				return err
			}
			o.Out, o.JSON = outs.Live, outs.JSON
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			_, err = bench.Disk(ctx, o)
			return errors.Join(err, outs.Close())
		},
	}
	f := c.Flags()
	f.StringVar(&o.Dir, "dir", ".", "directory to measure: a broker's storePathRootDir, or any directory on the same file system (a temporary file is made there and removed)")
	f.IntVar(&o.Size, "size", 4096, fmt.Sprintf("bytes per append, %d to %d (a one-message raft entry is about 1.2 KiB; entries under load are 64-256 KiB)", bench.DiskMinSize, bench.DiskMaxSize))
	f.IntVar(&o.Count, "count", 1000, "appends (0 = run for --duration)")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "run time when --count is 0")
	f.IntVar(&o.Parallel, "parallel", 1, fmt.Sprintf("appenders at once, 1 to %d, each on a file of its own (3: the nodes of a group that share one disk)", bench.DiskMaxParallel))
	f.StringVar(&jsonPath, "json", "", "also write one JSON line with the result to this file ('-' = stdout; the text then goes to stderr)")
	return c
}

// startCPUProfile profiles the bench process itself, so the client's cost per
// message can be read next to the brokers' (/debug/pprof on their admin port).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpu-profile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
