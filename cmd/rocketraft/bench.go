package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/bench"
)

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Load a running cluster with the rocketmq-client-go producer or consumer"}
	var namesrv, topic, group string
	var producers, count, size, batch, window int
	var client, mode string
	var duration, timeout time.Duration
	var creds credentialFlags
	var produceTLS, consumeTLS clientTLSFlags
	produce := &cobra.Command{
		Use:   "produce",
		Short: "Send messages and print msgs/s, MB/s and latency each second, then a summary",
		RunE: func(cmd *cobra.Command, _ []string) error {
			tlsCfg, err := produceTLS.config()
			if err != nil {
				return err
			}
			_, err = bench.Produce(context.Background(), bench.ProduceOptions{
				Namesrv: strings.Split(namesrv, ";"), Topic: topic, Group: group, Producers: producers,
				Count: count, Duration: duration, MessageSize: size, Batch: batch, Out: os.Stdout,
				Client: bench.Client(client), Mode: bench.Mode(mode), Window: window, Credentials: creds.credentials(),
				TLS: tlsCfg,
			})
			return err
		},
	}
	consume := &cobra.Command{
		Use:   "consume",
		Short: "Consume a topic from the first offset and count what arrives",
		RunE: func(cmd *cobra.Command, _ []string) error {
			tlsCfg, err := consumeTLS.config()
			if err != nil {
				return err
			}
			_, err = bench.Consume(context.Background(), bench.ConsumeOptions{
				Namesrv: strings.Split(namesrv, ";"), Topic: topic, Group: group, Count: count, Timeout: timeout, Out: os.Stdout, Credentials: creds.credentials(),
				TLS: tlsCfg,
			})
			return err
		},
	}
	for _, c := range []*cobra.Command{produce, consume} {
		c.Flags().StringVar(&namesrv, "namesrv", "127.0.0.1:9876", "nameserver addresses, ';'-separated")
		c.Flags().StringVar(&topic, "topic", "BenchTopic", "topic")
		c.Flags().IntVar(&count, "count", 0, "number of messages (0 = run for --duration)")
		creds.register(c.Flags())
	}
	produceTLS.register(produce.Flags(), true)
	consumeTLS.register(consume.Flags(), false)
	produce.Flags().StringVar(&group, "group", "rocketraft_bench_producer", "producer group")
	produce.Flags().IntVar(&producers, "producers", 16, "concurrent senders")
	produce.Flags().IntVar(&size, "size", 1024, "message body size in bytes")
	produce.Flags().IntVar(&batch, "batch", 1, "messages per send (>1 uses SEND_BATCH_MESSAGE)")
	produce.Flags().StringVar(&client, "client", "native", "native (this project's remoting client) or rocketmq-go (the official Go client)")
	produce.Flags().StringVar(&mode, "mode", "sync", "sync (one send at a time per producer) or async (--window sends in flight per producer; native client)")
	produce.Flags().IntVar(&window, "window", 32, "sends in flight per producer with --mode async")
	produce.Flags().DurationVar(&duration, "duration", 10*time.Second, "run time when --count is 0")
	consume.Flags().StringVar(&group, "group", "rocketraft_bench_consumer", "consumer group")
	consume.Flags().DurationVar(&timeout, "timeout", time.Minute, "give up after this long")
	cmd.AddCommand(produce, consume)
	return cmd
}
