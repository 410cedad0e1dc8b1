// Package broker wires one node of a broker group: the raft node lifecycle, the
// RocketMQ request processors, long polling, role changes and nameserver
// registration, leader-only services, and forwarding of writes to the leader.
//
// It may import fsm, raftlog, store, transport and nameserver (client types only).
package broker
