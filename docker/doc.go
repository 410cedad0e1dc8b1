// Package docker holds the container packaging: Dockerfile (multi-stage, static
// CGO-free binary on a small Alpine base whose busybox wget serves the health
// checks), compose.yaml (one nameserver and the three-node group broker-a on a
// private network with fixed IPs, a named volume per node, /healthz checks) and
// the configs it mounts under conf/.
//
// There is no Go code to import here. The build machines have no Docker engine,
// so compose_test.go checks the files instead: it parses compose.yaml, loads
// every mounted config with the config package (the same loader the binary
// uses), and asserts they agree with each other and with the compose file
// (peers, ids, addresses, health-check ports, published ports, volumes).
//
// Concurrency: none. Imports (tests only): config and a YAML parser; nothing in
// the project imports this package.
//
// Usage:
//
//	docker compose -f docker/compose.yaml up -d --build
//	docker compose -f docker/compose.yaml exec broker-a-n0 \
//	    rocketraft admin -n 172.28.0.10:9876 cluster
package docker
