package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// CmdACLSet replaces the group's ACL document (code 16: the first of the 16..23
// reserved for ACL).
const CmdACLSet CommandType = 16

// MaxACLDocument bounds a replicated ACL document. RocketMQ's plain_acl.yml with
// a thousand accounts of ten resource perms each is about 400 KiB; 1 MiB keeps a
// raft entry, every checkpoint and every snapshot header far from any limit
// while leaving room for that.
const MaxACLDocument = 1 << 20

// Business errors of CmdACLSet: result values, identical on every replica.
var (
	// ErrACLTooLarge: the document is over MaxACLDocument; nothing changed.
	ErrACLTooLarge = errors.New("fsm: ACL document too large")
	// ErrACLVersionConflict: the command's version is not the replicated
	// version + 1 — another change was applied since the proposer read the
	// document (a lost update otherwise); nothing changed.
	ErrACLVersionConflict = errors.New("fsm: ACL version moved")
)

// ACLSet replaces the whole ACL document (plain_acl.yml bytes) with Document at
// Version. Apply accepts it only when Version is the replicated version + 1 (a
// compare-and-set, like ScheduleAdvance), so two proposers that read the same
// document cannot overwrite each other's change. The FSM does not parse the
// document (it does not know the ACL format): broker/auth does, and the leader
// proposes only documents that parse.
type ACLSet struct {
	Version uint64
	// Document is the plain_acl.yml content. After DecodeCommand it aliases the
	// command bytes.
	Document []byte
}

func (ACLSet) commandType() CommandType { return CmdACLSet }

// appendACLSet encodes an ACLSet. Payload:
//
//	uint64 version | uint32 len | len bytes document
//
// A document over MaxACLDocument still encodes (up to 4 GiB): Apply refuses it
// as a business error, so a too-large proposal can never stop a node.
func appendACLSet(dst []byte, c *ACLSet) ([]byte, error) {
	if uint64(len(c.Document)) > math.MaxUint32 {
		return dst, fmt.Errorf("%w: %s: document of %d bytes", ErrBadCommand, CmdACLSet, len(c.Document))
	}
	be := binary.BigEndian
	dst = append(dst, byte(CmdACLSet), commandVersion)
	dst = be.AppendUint64(dst, c.Version)
	dst = be.AppendUint32(dst, uint32(len(c.Document)))
	return append(dst, c.Document...), nil
}

func decodeACLSet(p []byte) (*ACLSet, error) {
	const t = CmdACLSet
	be := binary.BigEndian
	if len(p) < 12 {
		return nil, badf(t, "short header: %d bytes", len(p))
	}
	c := &ACLSet{Version: be.Uint64(p)}
	n := be.Uint32(p[8:])
	p = p[12:]
	if uint64(n) != uint64(len(p)) {
		return nil, badf(t, "document length %d in %d bytes", n, len(p))
	}
	c.Document = p[:n:n]
	return c, nil
}

// aclState is the replicated ACL document. Invariant: immutable once stored
// (Metadata swaps the pointer), so readers may keep doc without a copy.
type aclState struct {
	doc     []byte
	version uint64
}

// aclImage is the ACL part of the metadata image; absent while never set.
type aclImage struct {
	Version  uint64 `json:"version"`
	Document []byte `json:"document"`
}

// ACLDocument returns the replicated ACL document and its version; ok is false
// while none was ever set (the broker then uses its aclFile). It takes no lock
// (one atomic load), so the authorisation stage may call it on every request.
// The returned bytes are shared: callers must not modify them.
func (m *Metadata) ACLDocument() (doc []byte, version uint64, ok bool) {
	s := m.acl.Load()
	if s == nil {
		return nil, 0, false
	}
	return s.doc, s.version, true
}

// setACL applies an ACLSet (FSM goroutine only). The document is copied: the
// command's bytes alias the raft log entry.
func (m *Metadata) setACL(c *ACLSet) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur uint64
	if s := m.acl.Load(); s != nil {
		cur = s.version
	}
	if len(c.Document) > MaxACLDocument {
		return fmt.Errorf("set ACL version=%d: %d bytes, limit %d: %w", c.Version, len(c.Document), MaxACLDocument, ErrACLTooLarge)
	}
	if c.Version != cur+1 {
		return fmt.Errorf("set ACL version=%d, replicated version is %d: %w", c.Version, cur, ErrACLVersionConflict)
	}
	m.acl.Store(&aclState{doc: append([]byte{}, c.Document...), version: c.Version})
	return nil
}

// aclImageOf is the image of the current document (nil: never set). Caller
// holds m.mu.
func (m *Metadata) aclImageOf() *aclImage {
	s := m.acl.Load()
	if s == nil {
		return nil
	}
	return &aclImage{Version: s.version, Document: s.doc}
}

// aclStateOf is the state an image installs (nil: never set, also for images
// written before the ACL existed).
func aclStateOf(img *aclImage) *aclState {
	if img == nil {
		return nil
	}
	doc := img.Document
	if doc == nil {
		doc = []byte{}
	}
	return &aclState{doc: doc, version: img.Version}
}
