package console

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// Config is what a console serves and how.
type Config struct {
	// Admin reaches the cluster; the console signs its reads with Admin's
	// credentials (Credentials below must be the same account).
	Admin *admin.Client
	// Listen is the HTTP address (host:port); "127.0.0.1:0" picks a port.
	Listen string
	// Credentials, when set, turn the console's ACL mode on: users must log in
	// with an account of the cluster, and their changes are signed with it.
	Credentials sign.Credentials
	// SessionTTL is how long a login lasts (default 12 h).
	SessionTTL time.Duration
	// ClusterEvery is the sampling period of cluster snapshots (default 1 s);
	// TopicsEvery that of topic and group numbers (default 5 s).
	ClusterEvery, TopicsEvery time.Duration
	// Window is how much history the time series keep (default 10 min).
	Window time.Duration
	// Namesrv lists the nameservers for the cluster document (display only).
	Namesrv []string
	// Version is shown in the session document.
	Version string
	Logger  hclog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.SessionTTL <= 0 {
		c.SessionTTL = 12 * time.Hour
	}
	if c.ClusterEvery <= 0 {
		c.ClusterEvery = time.Second
	}
	if c.TopicsEvery <= 0 {
		c.TopicsEvery = 5 * time.Second
	}
	if c.Window <= 0 {
		c.Window = 10 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Server is one console.
type Server struct {
	cfg      Config
	adm      *admin.Client
	log      hclog.Logger
	sessions *sessions
	sampler  *sampler
	mux      *http.ServeMux
	seen     memory

	mu sync.Mutex
	ln net.Listener
}

// New builds a server; Run (or Serve) starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Admin == nil {
		return nil, errors.New("console: Config.Admin is required")
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, adm: cfg.Admin, log: cfg.Logger.Named("console"),
		sessions: newSessions(cfg.SessionTTL, cfg.Now)}
	s.sampler = newSampler(s, cfg)
	s.mux = http.NewServeMux()
	s.routes()
	return s, nil
}

// Handler is the whole console (API and assets), for tests and embedding.
func (s *Server) Handler() http.Handler { return s.mux }

// Listen binds cfg.Listen and returns the address bound.
func (s *Server) Listen() (string, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("console: listen %s: %w", s.cfg.Listen, err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	return ln.Addr().String(), nil
}

// Run listens (unless Listen was called), samples the cluster and serves
// until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
		s.mu.Lock()
		ln = s.ln
		s.mu.Unlock()
	}
	hs := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.sampler.run(sctx) }()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		stop()
		wg.Wait()
		return fmt.Errorf("console: serve: %w", err)
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut) // event streams end with ctx; Shutdown does not wait on them long
	stop()
	wg.Wait()
	return nil
}

// apiFunc is one endpoint: it returns the answer document or an error.
type apiFunc func(r *http.Request, u user) (any, error)

// endpoint serves one API path, dispatching on the method so a wrong one is a
// JSON 405 too; op, when set, is the operation the user must be allowed.
type endpoint struct {
	fn apiFunc
	op string
}

func (s *Server) handle(path string, methods map[string]endpoint) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		ep, ok := methods[r.Method]
		if !ok {
			allowed := make([]string, 0, len(methods))
			for m := range methods {
				allowed = append(allowed, m)
			}
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed,
				Error: fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", "))})
			return
		}
		err := sameOrigin(r)
		var u user
		if err == nil {
			u, err = s.user(r)
		}
		if err == nil && ep.op != "" && !u.may(ep.op) {
			err = &apiError{http.StatusForbidden, codeForbidden, "", fmt.Sprintf(
				"account %s may not %s: it is not an admin account", u.accessKey, ep.op)}
		}
		if err != nil {
			writeError(w, err)
			return
		}
		v, err := s.safely(ep.fn, r, u)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

// sameOrigin refuses what another site's page could make a browser send to a
// console on localhost (which has no cookie to protect it without ACL): a
// request whose Origin is another host, and a body that is not declared JSON
// (a cross-site form or text/plain post needs no preflight; JSON does, and the
// console answers none).
func sameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return &apiError{http.StatusForbidden, codeForbidden, "Origin", fmt.Sprintf("requests from %s are refused: the console answers only its own page", o)}
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.ContentLength != 0 {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			return badRequest("Content-Type", "send the body as Content-Type: application/json (got %q)", r.Header.Get("Content-Type"))
		}
	}
	return nil
}

// safely runs fn and turns a panic into a one-line internal error: a bug must
// not show a stack trace to the page, nor kill the console.
func (s *Server) safely(fn apiFunc, r *http.Request, u user) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "path", r.URL.Path, "panic", p)
			v, err = nil, &apiError{http.StatusInternalServerError, codeInternal, "", fmt.Sprintf("internal error serving %s: %v", r.URL.Path, p)}
		}
	}()
	return fn(r, u)
}

func (s *Server) routes() {
	s.mux.HandleFunc("/api/v1/session", s.session)
	s.mux.HandleFunc("/api/v1/login", s.login)
	s.mux.HandleFunc("/api/v1/logout", s.logout)
	s.handle("/api/v1/cluster", map[string]endpoint{"GET": {fn: s.getCluster}})
	s.mux.HandleFunc("/api/v1/events", s.events)
	s.handle("/api/v1/timeline", map[string]endpoint{"GET": {fn: s.getTimeline}})
	s.handle("/api/v1/series", map[string]endpoint{"GET": {fn: s.getSeries}})

	s.handle("/api/v1/topics", map[string]endpoint{"GET": {fn: s.listTopics}, "POST": {fn: s.createTopic, op: opTopicCreate}})
	s.handle("/api/v1/topics/{topic}", map[string]endpoint{"GET": {fn: s.getTopic},
		"PATCH": {fn: s.updateTopic, op: opTopicUpdate}, "DELETE": {fn: s.deleteTopic, op: opTopicDelete}})
	s.handle("/api/v1/topics/{topic}/delete-preview", map[string]endpoint{"GET": {fn: s.deletePreview}})

	s.handle("/api/v1/groups", map[string]endpoint{"GET": {fn: s.listGroups}})
	s.handle("/api/v1/groups/{group}", map[string]endpoint{"GET": {fn: s.getGroup}})
	s.handle("/api/v1/groups/{group}/reset-preview", map[string]endpoint{"POST": {fn: s.resetPreview}})
	s.handle("/api/v1/groups/{group}/reset", map[string]endpoint{"POST": {fn: s.resetGroup, op: opGroupReset}})

	s.handle("/api/v1/messages", map[string]endpoint{"GET": {fn: s.searchMessages}})
	s.handle("/api/v1/messages/{msgId}", map[string]endpoint{"GET": {fn: s.getMessage}})

	s.handle("/api/v1/raft/{brokerName}", map[string]endpoint{"GET": {fn: s.getRaft}})
	s.handle("/api/v1/raft/{brokerName}/preview", map[string]endpoint{"POST": {fn: s.raftPreview}})
	s.handle("/api/v1/raft/{brokerName}/{op}", map[string]endpoint{"POST": {fn: s.raftChange}})

	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorDoc{Code: codeNotFound, Error: "no API endpoint " + r.Method + " " + r.URL.Path})
	})
	s.mux.Handle("/", assets())
}
