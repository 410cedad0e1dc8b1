package auth

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// Documents is where the group's replicated ACL document comes from
// (replica.ACLs implements it). ACLDocument must be cheap: Source calls it on
// every request.
type Documents interface {
	ACLDocument() (doc []byte, version uint64, ok bool)
}

// InForce is the ACL a node enforces and where it came from.
type InForce struct {
	ACL *ACL
	// Replicated is false while the group never set a document: ACL is then the
	// aclFile this node loaded at start (the initial state).
	Replicated bool
	// Version is the replicated document's version (0 for the file).
	Version uint64
	// Since is when this node started enforcing Version (its own clock; for
	// display, as DataVersion's timestamp).
	Since time.Time
	// Stale is set when the document at Version did not parse: ACL is then the
	// one in force before it.
	Stale bool
}

// Source gives the ACL in force: the replicated document once one was ever
// set, parsed once per version, else the file loaded at start. A replicated
// document that does not parse keeps the previous ACL and is logged (the
// leader never proposes one: every edit goes through Parse first).
//
// Concurrency: safe for concurrent use. Current costs one ACLDocument call and
// one atomic load while the version is unchanged; the first request that sees
// a new version parses it (under a mutex, once).
type Source struct {
	file *ACL
	docs Documents
	log  hclog.Logger
	now  func() time.Time

	mu sync.Mutex // serialises parsing a new version
	// Invariant: never nil after NewSource.
	cur atomic.Pointer[InForce]
}

// NewSource is a Source over the aclFile ACL (may be empty, never nil) and
// the replicated documents (nil: the file only). now stamps InForce.Since; nil
// means time.Now. log may be nil.
func NewSource(file *ACL, docs Documents, log hclog.Logger, now func() time.Time) *Source {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if now == nil {
		now = time.Now
	}
	s := &Source{file: file, docs: docs, log: log.Named("acl"), now: now}
	s.cur.Store(&InForce{ACL: file, Since: now()})
	return s
}

// Current returns the ACL in force now: the one of the document this node
// applied last, so every node of a group enforces the same accounts at the
// same log index.
func (s *Source) Current() *InForce {
	c := s.cur.Load()
	if s.docs == nil {
		return c
	}
	doc, v, ok := s.docs.ACLDocument()
	if ok == c.Replicated && (!ok || v == c.Version) {
		return c
	}
	return s.install(doc, v, ok)
}

// ACL is Current().ACL.
func (s *Source) ACL() *ACL { return s.Current().ACL }

func (s *Source) install(doc []byte, v uint64, ok bool) *InForce {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur.Load()
	if ok == c.Replicated && (!ok || v == c.Version) {
		return c // another request installed it meanwhile
	}
	n := &InForce{ACL: s.file, Replicated: ok, Version: v, Since: s.now()}
	if ok {
		acl, err := Parse(doc)
		if err != nil {
			// Parse errors name accounts by access key, never a secret.
			s.log.Error("replicated ACL document does not parse; keeping the ACL in force",
				"version", v, "inForceVersion", c.Version, "error", err)
			n.ACL, n.Stale = c.ACL, true
		} else {
			n.ACL = acl
			s.log.Info("ACL changed", "version", v, "accounts", len(acl.accounts))
		}
	}
	s.cur.Store(n)
	return n
}

// Stage is the authorisation stage over the ACL in force (see ACL.Stage).
func (s *Source) Stage(next route.Handler) route.Handler {
	return stage(s.ACL, next)
}

// stage checks every request against get() before next runs.
func stage(get func() *ACL, next route.Handler) route.Handler {
	return func(ctx context.Context, req *route.Request) (*transport.Command, error) {
		var remote netip.Addr
		if req.Conn != nil {
			remote, _ = RemoteIP(req.Conn.RemoteAddr())
		}
		if err := get().Check(req.RequestCode(), req.Fields(), req.Body, remote); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}
