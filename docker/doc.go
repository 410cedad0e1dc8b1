// Package docker holds the container packaging: Dockerfile (multi-stage, static
// CGO-free binary built like the Makefile's, on a small Alpine base whose
// busybox wget serves the health checks; fixed non-root uid 10001),
// compose.yaml (one nameserver and the three-node group broker-a on a private
// network with fixed IPs, a named volume per node, /healthz checks) and the
// configs it mounts under conf/. The build context is the repository root,
// trimmed by its .dockerignore.
//
// There is no Go code to import here. The build machines have no Docker engine,
// so the tests check the files instead:
//
//   - compose_test.go parses compose.yaml, loads every mounted config with the
//     config package (the same loader the binary uses), and asserts they agree
//     with each other and with the compose file (peers, ids, addresses,
//     health-check ports, published ports, volumes);
//   - findings_test.go holds the rules the first review found broken:
//     .dockerignore keeps .git and data/ out of the context, exactly one
//     service builds the image and the others run it, admin ports (metrics,
//     pprof) are published on loopback only, every health check has a
//     start_period;
//   - dockerfile_test.go parses the Dockerfile lightly: the Makefile's package,
//     go.mod's toolchain, a numeric non-root USER, EXPOSE of every configured port.
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
