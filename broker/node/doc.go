// Package node is one replicated node of a broker group: hashicorp/raft wired to
// the raftlog stores, the fsm and a transport, plus group commit (the proposer).
package node
