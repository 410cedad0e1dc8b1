package console

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// Operations a user may be allowed (session document "operations").
const (
	opTopicCreate    = "topic.create"
	opTopicUpdate    = "topic.update"
	opTopicDelete    = "topic.delete"
	opGroupReset     = "group.reset"
	opRaftTransfer   = "raft.transfer"
	opRaftAddVoter   = "raft.addVoter"
	opRaftAddNonvote = "raft.addNonvoter"
	opRaftRemove     = "raft.remove"
	opRaftSnapshot   = "raft.snapshot"
)

// allOps is every operation, in the order the session document lists them.
var allOps = []string{opTopicCreate, opTopicUpdate, opTopicDelete, opGroupReset,
	opRaftTransfer, opRaftAddVoter, opRaftAddNonvote, opRaftRemove, opRaftSnapshot}

// cookieName is the session cookie.
const cookieName = "rocketraft_console"

// user is who sends a request: with ACL off, an anonymous admin.
type user struct {
	accessKey string
	creds     sign.Credentials
	admin     bool
}

func (u user) may(op string) bool { return u.admin && slices.Contains(allOps, op) }

func (u user) operations() []string {
	if !u.admin {
		return []string{}
	}
	return slices.Clone(allOps)
}

type session struct {
	u       user
	expires time.Time
}

// sessions are the logins of this console process, by cookie token.
type sessions struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, m: map[string]session{}}
}

func (ss *sessions) add(u user) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for k, s := range ss.m { // expire on the way: logins are rare
		if now.After(s.expires) {
			delete(ss.m, k)
		}
	}
	ss.m[tok] = session{u: u, expires: now.Add(ss.ttl)}
	return tok, nil
}

func (ss *sessions) get(tok string) (user, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[tok]
	if !ok || ss.now().After(s.expires) {
		delete(ss.m, tok)
		return user{}, false
	}
	return s.u, true
}

func (ss *sessions) drop(tok string) {
	ss.mu.Lock()
	delete(ss.m, tok)
	ss.mu.Unlock()
}

func (s *Server) aclEnabled() bool { return s.cfg.Credentials.AccessKey != "" }

// user is the requester: anyone with ACL off, else the session's account or
// 401.
func (s *Server) user(r *http.Request) (user, error) {
	if !s.aclEnabled() {
		return user{admin: true}, nil
	}
	if c, err := r.Cookie(cookieName); err == nil {
		if u, ok := s.sessions.get(c.Value); ok {
			return u, nil
		}
	}
	return user{}, &apiError{http.StatusUnauthorized, codeUnauthenticated, "",
		"log in first: this console runs with ACL on (POST /api/v1/login with accessKey and secretKey)"}
}

type sessionDoc struct {
	ACLEnabled bool     `json:"aclEnabled"`
	LoggedIn   bool     `json:"loggedIn"`
	AccessKey  string   `json:"accessKey"`
	Admin      bool     `json:"admin"`
	Operations []string `json:"operations"`
	Version    string   `json:"version"`
}

func (s *Server) sessionOf(u user, in bool) sessionDoc {
	d := sessionDoc{ACLEnabled: s.aclEnabled(), LoggedIn: in, AccessKey: u.accessKey, Admin: u.admin && in,
		Operations: []string{}, Version: s.cfg.Version}
	if in {
		d.Operations = u.operations()
	}
	return d
}

// session answers GET /api/v1/session, also without a session: it is how the
// UI learns it must log in.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed, Error: r.Method + " /api/v1/session: use GET"})
		return
	}
	u, err := s.user(r)
	writeJSON(w, http.StatusOK, s.sessionOf(u, err == nil))
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed, Error: r.Method + " /api/v1/login: use POST"})
		return
	}
	var body struct {
		AccessKey string `json:"accessKey"`
		SecretKey string `json:"secretKey"`
	}
	if err := sameOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	if !s.aclEnabled() {
		writeJSON(w, http.StatusOK, s.sessionOf(user{admin: true}, true))
		return
	}
	switch {
	case body.AccessKey == "":
		writeError(w, badRequest("accessKey", "accessKey is required"))
		return
	case body.SecretKey == "":
		writeError(w, badRequest("secretKey", "secretKey is required"))
		return
	}
	u, err := s.checkAccount(r, sign.Credentials{AccessKey: body.AccessKey, SecretKey: body.SecretKey})
	if err != nil {
		writeError(w, err)
		return
	}
	tok, err := s.sessions.add(u)
	if err != nil {
		writeError(w, fmt.Errorf("new session: %w", err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(s.cfg.SessionTTL / time.Second)})
	writeJSON(w, http.StatusOK, s.sessionOf(u, true))
}

// checkAccount asks a broker whether cr is an account (a signed runtime-info
// read; a wrong pair is refused) and whether it is an admin (a signed read of
// an admin-only code).
func (s *Server) checkAccount(r *http.Request, cr sign.Credentials) (user, error) {
	groups, err := s.adm.Groups(r.Context())
	if err != nil {
		return user{}, err
	}
	var addr string
	for _, g := range groups {
		if addr = g.Target(); addr != "" {
			break
		}
	}
	if addr == "" {
		return user{}, &apiError{http.StatusServiceUnavailable, codeUnavailable, "", "no broker is registered to check the account against"}
	}
	c := s.adm.WithCredentials(cr)
	code, remark, err := c.Probe(r.Context(), addr, transport.GetBrokerRuntimeInfo)
	if err != nil {
		return user{}, err
	}
	if code != transport.Success {
		return user{}, &apiError{http.StatusUnauthorized, codeUnauthenticated, "secretKey",
			fmt.Sprintf("the broker refused accessKey %s: %s", cr.AccessKey, remark)}
	}
	code, _, err = c.Probe(r.Context(), addr, transport.RaftPeers)
	if err != nil {
		return user{}, err
	}
	return user{accessKey: cr.AccessKey, creds: cr, admin: code == transport.Success}, nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed, Error: r.Method + " /api/v1/logout: use POST"})
		return
	}
	if c, err := r.Cookie(cookieName); err == nil {
		s.sessions.drop(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	writeJSON(w, http.StatusOK, map[string]bool{"loggedIn": false})
}

// as is the admin client a user's change runs under: their own account with
// ACL on, the console's without.
func (s *Server) as(u user) *admin.Client {
	if s.aclEnabled() && u.creds.AccessKey != "" {
		return s.adm.WithCredentials(u.creds)
	}
	return s.adm
}
