// Package fakereplica is a single-node replica.Replica for tests: it appends
// straight to a real store and keeps the replicated metadata in maps, applying
// schedule advances and transaction ops the way the FSM does. Role and leader
// are set by the test.
//
// Only tests import it (internal/archtest enforces that).
//
//	rep := fakereplica.New(st, replica.RoleLeader)
//	b, _ := broker.New(cfg, st, rep)
//	rep.SetStatus(replica.Status{Role: replica.RoleFollower, LeaderID: "n1"})
//
// Every method is safe for concurrent use.
package fakereplica
