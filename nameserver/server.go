package nameserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/transport"
)

// DefaultScanInterval is how often expired brokers are swept (RocketMQ: 5 s).
const DefaultScanInterval = 5 * time.Second

// Config configures a nameserver.
type Config struct {
	ListenAddr string // e.g. ":9876" or "127.0.0.1:0"
	// BrokerExpireTimeout applies to registrations without heartbeatTimeoutMillis.
	// Default DefaultBrokerExpireTimeout (120 s).
	BrokerExpireTimeout time.Duration
	// ScanInterval is the expiry sweep period. Default DefaultScanInterval.
	ScanInterval time.Duration
	// TLS, when set, applies to the listening port (tlsMode); nil is plaintext only.
	TLS *transport.TLSConfig
	// BrokerAuth, when set (brokerAuthFile), refuses REGISTER_BROKER and
	// UNREGISTER_BROKER unless signed with the secret of the brokerName they
	// name; nil accepts them from anyone (Apache's behaviour).
	BrokerAuth *BrokerSecrets
	// Admin, when set (aclEnable), decides DELETE_TOPIC_IN_NAMESRV; nil leaves
	// it open. Reads are never checked.
	Admin AdminAuthorizer
}

// Server is a nameserver: a Registry exposed over the remoting protocol, plus the
// drivers that feed it time (expiry ticker) and connection closes.
type Server struct {
	cfg    Config
	logger hclog.Logger
	reg    *Registry
	ts     *transport.Server

	metrics *serverMetrics
	// serving is true between a successful Start and Close (/readyz).
	serving atomic.Bool

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New builds a server; nothing listens until Start. A nil logger discards.
func New(cfg Config, logger hclog.Logger) *Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if cfg.BrokerExpireTimeout <= 0 {
		cfg.BrokerExpireTimeout = DefaultBrokerExpireTimeout
	}
	if cfg.ScanInterval <= 0 {
		cfg.ScanInterval = DefaultScanInterval
	}
	s := &Server{
		cfg:    cfg,
		logger: logger.Named("nameserver"),
		reg:    NewRegistry(cfg.BrokerExpireTimeout),
		stop:   make(chan struct{}),
	}
	s.metrics = newServerMetrics(s.reg)
	s.ts = transport.NewServer(transport.ServerConfig{
		Addr:        cfg.ListenAddr,
		Logger:      s.logger,
		OnConnClose: s.connClosed,
		TLS:         cfg.TLS,
	}, s)
	return s
}

// Registry exposes the route table (for an in-process dev cluster and tests).
func (s *Server) Registry() *Registry { return s.reg }

// Start listens and starts the expiry sweep.
func (s *Server) Start() error {
	if err := s.ts.Start(); err != nil {
		return fmt.Errorf("nameserver listen %s: %w", s.cfg.ListenAddr, err)
	}
	s.serving.Store(true)
	s.wg.Add(1)
	go s.expireLoop()
	s.logger.Info("nameserver started", "addr", s.ts.Addr(),
		"brokerExpireTimeout", s.cfg.BrokerExpireTimeout, "scanInterval", s.cfg.ScanInterval)
	return nil
}

// Addr is the bound listen address (useful with port 0).
func (s *Server) Addr() string { return s.ts.Addr() }

// Close stops listening, closes every connection and stops the sweep.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.serving.Store(false)
		close(s.stop)
		err = s.ts.Close()
		s.wg.Wait()
	})
	return err
}

func (s *Server) expireLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			for _, rb := range s.reg.ExpireBefore(now) {
				s.logger.Warn("broker expired", "brokerName", rb.BrokerName, "brokerAddr", rb.BrokerAddr)
			}
		}
	}
}

func (s *Server) connClosed(c *transport.Conn) {
	for _, rb := range s.reg.RemoveByConn(ConnID(c.ID())) {
		s.logger.Info("broker connection closed; removed", "brokerName", rb.BrokerName,
			"brokerAddr", rb.BrokerAddr, "remote", c.RemoteAddr())
	}
}

// ServeRemoting implements transport.Handler: serve, then count the request
// and its answer.
func (s *Server) ServeRemoting(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	resp := s.serve(ctx, conn, req)
	s.metrics.observe(req.RequestCode(), resp)
	return resp
}

func (s *Server) serve(_ context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	code := req.RequestCode()
	if err := s.authorize(conn, code, req); err != nil {
		s.logger.Warn("request refused", "code", code, "brokerName", req.Field(extBrokerName),
			"remote", remoteText(conn), "error", err)
		return errorResponse(err)
	}
	switch code {
	case transport.RegisterBroker:
		return s.registerBroker(conn, req)
	case transport.UnregisterBroker:
		return s.unregisterBroker(req)
	case transport.GetRouteInfoByTopic:
		return s.getRoute(req)
	case transport.GetBrokerClusterInfo:
		return jsonResponse(s.reg.ClusterInfo())
	case transport.GetAllTopicListFromNameServer:
		return jsonResponse(TopicList{TopicList: s.reg.TopicList()})
	case transport.GetSystemTopicListFromNS:
		return jsonResponse(TopicList{TopicList: s.reg.SystemTopicList()})
	case transport.DeleteTopicInNameSrv:
		return s.deleteTopic(req)
	default:
		return transport.NewResponse(transport.RequestCodeNotSupported,
			fmt.Sprintf("request code %s not supported by the nameserver", code))
	}
}

// authorize checks the writes: a broker's registration and unregistration
// against BrokerAuth, the administrative writes against Admin. Reads and
// codes the nameserver does not serve pass (the latter are refused anyway).
func (s *Server) authorize(conn *transport.Conn, code transport.RequestCode, req *transport.Command) error {
	switch code {
	case transport.RegisterBroker, transport.UnregisterBroker:
		if s.cfg.BrokerAuth != nil {
			return s.cfg.BrokerAuth.check(code, req.Fields(), req.Body)
		}
	case transport.DeleteTopicInNameSrv:
		if s.cfg.Admin != nil {
			if err := s.cfg.Admin.AuthorizeAdmin(code, req.Fields(), req.Body, remoteIP(conn)); err != nil {
				return adminDenied{err}
			}
		}
	}
	return nil
}

func remoteText(conn *transport.Conn) string {
	if conn == nil {
		return ""
	}
	return conn.RemoteAddr()
}

// errorResponse is the one place nameserver errors become response codes.
func errorResponse(err error) *transport.Command {
	switch {
	case errors.Is(err, ErrCRCMismatch):
		return transport.NewResponse(transport.SystemError, "crc32 not match: "+err.Error())
	case errors.Is(err, ErrStaleStateVersion):
		resp := transport.NewResponse(transport.SystemError, "register broker failed: "+err.Error())
		resp.ExtFields = map[string]string{extFenced: "true"}
		return resp
	case errors.Is(err, ErrNoPermission):
		return transport.NewResponse(transport.NoPermission, err.Error())
	case errors.Is(err, ErrInvalidRequest):
		return transport.NewResponse(transport.InvalidParameter, err.Error())
	default:
		return transport.NewResponse(transport.SystemError, err.Error())
	}
}

func jsonResponse(v any) *transport.Command {
	body, err := json.Marshal(v)
	if err != nil {
		return errorResponse(fmt.Errorf("encode response: %w", err))
	}
	resp := transport.NewResponse(transport.Success, "")
	resp.Body = body
	return resp
}

func (s *Server) registerBroker(conn *transport.Conn, req *transport.Command) *transport.Command {
	rr, err := decodeRegister(req.Fields(), req.Body)
	if err != nil {
		s.logger.Warn("bad REGISTER_BROKER", "error", err)
		return errorResponse(err)
	}
	if conn != nil { // nil only when a test calls the handler directly
		rr.ConnID = ConnID(conn.ID())
	}
	res, err := s.reg.Register(rr, time.Now())
	if err != nil {
		s.logger.Warn("REGISTER_BROKER refused", "brokerName", rr.BrokerName, "brokerAddr", rr.BrokerAddr,
			"brokerId", rr.BrokerID, "stateVersion", rr.DataVersion.StateVersion, "error", err)
		return errorResponse(err)
	}
	s.logger.Debug("broker registered", "cluster", rr.ClusterName, "brokerName", rr.BrokerName,
		"brokerAddr", rr.BrokerAddr, "brokerId", rr.BrokerID, "stateVersion", rr.DataVersion.StateVersion,
		"topics", len(rr.Topics))
	resp := transport.NewResponse(transport.Success, "")
	resp.ExtFields = map[string]string{extHAServerAddr: res.HAServerAddr, extMasterAddr: res.MasterAddr}
	return resp
}

func (s *Server) unregisterBroker(req *transport.Command) *transport.Command {
	ur, err := decodeUnregister(req.Fields())
	if err != nil {
		return errorResponse(err)
	}
	if s.reg.Unregister(ur) {
		s.logger.Info("broker unregistered", "brokerName", ur.BrokerName, "brokerAddr", ur.BrokerAddr,
			"brokerId", ur.BrokerID)
	}
	return transport.NewResponse(transport.Success, "")
}

func (s *Server) getRoute(req *transport.Command) *transport.Command {
	r := extReader{ext: req.Fields()}
	topic := r.required(extTopic)
	if r.err != nil {
		return errorResponse(fmt.Errorf("get route: %w", r.err))
	}
	route, ok := s.reg.Route(topic)
	if !ok {
		// Same wording as Java's nameserver; the Go client maps the code to
		// ErrTopicNotExist and the producer falls back to TBW102.
		return transport.NewResponse(transport.TopicNotExist,
			"No topic route info in name server for the topic: "+topic)
	}
	return jsonResponse(route)
}

func (s *Server) deleteTopic(req *transport.Command) *transport.Command {
	r := extReader{ext: req.Fields()}
	topic := r.required(extTopic)
	cluster := r.optional(extClusterName)
	if r.err != nil {
		return errorResponse(fmt.Errorf("delete topic: %w", r.err))
	}
	if s.reg.DeleteTopic(topic, cluster) {
		s.logger.Info("topic deleted", "topic", topic, "cluster", cluster)
	}
	return transport.NewResponse(transport.Success, "")
}
