// Package testcluster is an in-process N-node broker-group harness for tests
// (raft's in-memory transport for fast tests, loopback TCP for realistic ones) with
// partition and heal. Only tests import it.
package testcluster
