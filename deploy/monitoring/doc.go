// Package monitoring holds what an operator loads into Prometheus and Grafana
// to watch a rocketraft cluster, and the tests that keep those files honest.
//
// # Files
//
//	alerts.yaml      Prometheus alerting rules (rule_files: entry)
//	dashboard.json   a Grafana dashboard (import it; it asks for a Prometheus data source)
//	promql.go        MetricNames, Exported, Unknown: a small PromQL identifier scanner
//
// # Tests
//
// The tests start an in-process cluster (a nameserver and a three-node broker
// group over internal/testcluster, real TCP between clients and brokers, real
// HTTP scrapes) and run a known workload. scrape_test.go checks every RocketMQ
// 5 metric with its labels and values; monitoring_test.go extracts every metric
// name from every alert and dashboard expression and fails on one that no
// broker or nameserver registry exports.
//
// # Imports
//
// promql.go imports nothing of the project; the tests import broker, its
// metrics room, nameserver and the test harnesses.
package monitoring
