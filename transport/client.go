package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultDialTimeout bounds a dial when ClientConfig.DialTimeout is zero.
const DefaultDialTimeout = 5 * time.Second

// ClientConfig configures a Client. Zero values take defaults.
type ClientConfig struct {
	DialTimeout  time.Duration // default DefaultDialTimeout; the ctx of the call bounds it too
	MaxFrameSize int           // default DefaultMaxFrameSize
	Logger       hclog.Logger  // default: discard
	OnRequest    Handler       // serves requests the peer initiates; nil drops them

	WriteTimeout time.Duration // default DefaultWriteTimeout

	// TLS, when set, makes every connection TLS: the handshake runs inside the dial
	// (bounded by DialTimeout and the call's ctx). An empty ServerName is taken from
	// the address's host, as crypto/tls does. nil dials plaintext.
	TLS *tls.Config
}

// Client sends requests to remoting servers: one connection per address, dialled lazily
// and redialled on the next call after it fails. Safe for concurrent use.
type Client struct {
	cfg    ClientConfig
	logger hclog.Logger

	ctx      context.Context // parent of every connection's context
	cancel   context.CancelFunc
	handlers sync.WaitGroup

	mu      sync.Mutex
	conns   map[string]*Conn
	dialing map[string]*dialCall
	closed  bool
}

// dialCall lets concurrent callers for one address share a single dial.
type dialCall struct {
	done chan struct{}
	err  error
}

// NewClient returns a client; it dials nothing until the first call.
func NewClient(cfg ClientConfig) *Client {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		cfg:     cfg,
		logger:  cfg.Logger.Named("remoting-client"),
		ctx:     ctx,
		cancel:  cancel,
		conns:   make(map[string]*Conn),
		dialing: make(map[string]*dialCall),
	}
}

// Invoke sends req to addr and waits for the response matched by opaque. ctx bounds the
// dial and the wait; without a deadline it waits until the connection dies. req.Opaque is
// assigned here. A request that was written and then lost to a connection failure
// returns an error wrapping ErrConnClosed: its outcome on the server is unknown.
func (c *Client) Invoke(ctx context.Context, addr string, req *Command) (*Command, error) {
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	return conn.Invoke(ctx, req)
}

// InvokeOneway sends req to addr with the oneway flag (the server sends no response) and
// returns once it is queued for writing.
func (c *Client) InvokeOneway(ctx context.Context, addr string, req *Command) error {
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return err
	}
	return conn.InvokeOneway(req)
}

// conn returns the live connection to addr, dialling it if needed.
func (c *Client) conn(ctx context.Context, addr string) (*Conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, fmt.Errorf("connect addr=%s: %w", addr, ErrClientClosed)
		}
		if conn := c.conns[addr]; conn != nil {
			if !conn.isClosed() {
				c.mu.Unlock()
				return conn, nil
			}
			delete(c.conns, addr)
		}
		if call := c.dialing[addr]; call != nil {
			c.mu.Unlock()
			select {
			case <-call.done:
				if call.err != nil {
					return nil, call.err
				}
				continue // pick up the new connection
			case <-ctx.Done():
				return nil, fmt.Errorf("connect addr=%s: %w", addr, ctx.Err())
			}
		}
		call := &dialCall{done: make(chan struct{})}
		c.dialing[addr] = call
		c.mu.Unlock()

		conn, err := c.dial(ctx, addr)

		c.mu.Lock()
		delete(c.dialing, addr)
		if err == nil && c.closed {
			_ = conn.Close()
			conn, err = nil, fmt.Errorf("connect addr=%s: %w", addr, ErrClientClosed)
		}
		if err == nil {
			c.conns[addr] = conn
			conn.start() // under mu so Close never waits on a connection not yet started
		}
		call.err = err
		close(call.done)
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return conn, nil
	}
}

func (c *Client) dial(ctx context.Context, addr string) (*Conn, error) {
	d := net.Dialer{Timeout: c.cfg.DialTimeout}
	var nc net.Conn
	var err error
	var state *tls.ConnectionState
	if c.cfg.TLS != nil {
		// d.Timeout bounds the TCP connect and the handshake together.
		host, _, herr := net.SplitHostPort(addr)
		if herr != nil {
			return nil, fmt.Errorf("dial addr=%s: %w", addr, herr)
		}
		nc, err = (&tls.Dialer{NetDialer: &d, Config: dialConfig(c.cfg.TLS, host)}).DialContext(ctx, "tcp", addr)
		if err == nil {
			st := nc.(*tls.Conn).ConnectionState()
			state = &st
		}
	} else {
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("dial addr=%s: %w", addr, err)
	}
	conn := newConn(c.ctx, nc, connOptions{
		maxFrame:     c.cfg.MaxFrameSize,
		writeTimeout: c.cfg.WriteTimeout,
		handler:      c.cfg.OnRequest,
		logger:       c.logger,
		handlers:     &c.handlers,
		tlsState:     state,
		onClose: func(conn *Conn) {
			c.mu.Lock()
			if c.conns[addr] == conn {
				delete(c.conns, addr)
			}
			c.mu.Unlock()
			conn.logger.Debug("connection closed")
		},
	})
	conn.logger.Debug("connected")
	return conn, nil
}

// Close closes every connection; pending calls fail with ErrConnClosed and later calls
// with ErrClientClosed. It waits for the connections' goroutines but not for OnRequest
// handlers, whose contexts are cancelled.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	conns := make([]*Conn, 0, len(c.conns))
	for _, conn := range c.conns {
		conns = append(conns, conn)
	}
	c.mu.Unlock()
	c.cancel()
	for _, conn := range conns {
		_ = conn.Close()
	}
	for _, conn := range conns {
		conn.loops.Wait()
	}
	return nil
}
