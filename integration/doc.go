// Package integration holds black-box tests that run real rocketraft processes and
// drive them with the real rocketmq-client-go. They run when ROCKETRAFT_INTEGRATION
// is set (make integration); a short subset runs in make test.
package integration
