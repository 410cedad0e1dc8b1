// Package fsm is the raft.FSM of a broker group: the versioned command codec, Apply
// into the store, replicated metadata (topics, groups, consumer offsets, delay
// progress), the apply checkpoint, snapshot and restore.
//
// It may import store only and never touches the network. Apply is deterministic:
// no clocks, randomness or node-local configuration.
package fsm
