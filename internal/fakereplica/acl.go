package fakereplica

import (
	"context"
	"fmt"
	"slices"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
)

// aclState is the fake's replicated ACL document.
type aclState struct {
	doc     []byte
	version uint64
	set     bool
}

// ACLDocument returns the document SetACL (or a leader mirroring to this fake)
// stored last.
func (f *Replica) ACLDocument() ([]byte, uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acl.doc, f.acl.version, f.acl.set
}

// SetACL stores doc at the next version when this fake leads, as the FSM
// applies it (size limit included), and installs it in every fake named by
// MirrorACLTo, which stands in for raft replicating the entry.
func (f *Replica) SetACL(_ context.Context, doc []byte) error {
	f.mu.Lock()
	if err := f.leading(); err != nil {
		f.mu.Unlock()
		return err
	}
	if len(doc) > fsm.MaxACLDocument {
		f.mu.Unlock()
		return fmt.Errorf("%w: %w", replica.ErrConfigRefused, fsm.ErrACLTooLarge)
	}
	st := aclState{doc: slices.Clone(doc), version: f.acl.version + 1, set: true}
	f.acl = st
	mirrors := slices.Clone(f.aclMirrors)
	f.mu.Unlock()
	for _, m := range mirrors {
		m.mu.Lock()
		m.acl = st
		m.mu.Unlock()
	}
	return nil
}

// MirrorACLTo makes every later SetACL on f also install the document in
// others (the followers of a two-broker test).
func (f *Replica) MirrorACLTo(others ...*Replica) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aclMirrors = append(f.aclMirrors, others...)
}
