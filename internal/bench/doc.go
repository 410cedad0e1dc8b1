// Package bench drives a running cluster with the real rocketmq-client-go: a
// producer load (sync sends from N goroutines) and a consumer that counts what it
// receives, printing one progress line per second and a summary with latency
// percentiles. cmd/rocketraft's `bench` subcommand only parses flags into Options.
package bench
