package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Handler serves requests that arrive on a connection. A nil response means nothing is
// sent; the transport fills in the response's opaque and sets its response flag. ctx is
// cancelled when the connection closes or the server shuts down.
type Handler interface {
	ServeRemoting(ctx context.Context, conn *Conn, req *Command) *Command
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, conn *Conn, req *Command) *Command

// ServeRemoting calls f.
func (f HandlerFunc) ServeRemoting(ctx context.Context, conn *Conn, req *Command) *Command {
	return f(ctx, conn, req)
}

const (
	// DefaultMaxInFlight bounds the handlers running at once for one connection. When it
	// is reached the connection stops being read, which pushes back on the peer through TCP.
	DefaultMaxInFlight = 1024
	// DefaultReadIdleTimeout matches the Go client's own 120 s read deadline and Java's
	// channel expiry.
	DefaultReadIdleTimeout = 120 * time.Second
	// DefaultWriteTimeout bounds one vectored write of queued frames.
	DefaultWriteTimeout = 15 * time.Second

	readBufferSize = 64 << 10
	// tlsWriteBufferSize holds four full TLS records (16 KiB each), so a batch of
	// small frames leaves in a few records and one large body is split by tls.Conn
	// itself.
	tlsWriteBufferSize = 64 << 10
	// maxWriteBatch bounds the frames gathered into one writev so the write deadline
	// stays meaningful for each batch.
	maxWriteBatch = 128
)

var (
	connIDs       atomic.Uint64
	opaqueCounter atomic.Int32
)

// nextOpaque returns a process-wide request id, like the Go client's counter (starts at 1).
func nextOpaque() int32 { return opaqueCounter.Add(1) }

// connOptions are what a Conn needs from its owner (Server or Client).
type connOptions struct {
	maxFrame     int
	readIdle     time.Duration // 0: no read deadline
	writeTimeout time.Duration
	maxInFlight  int
	handler      Handler // nil: incoming requests are dropped
	logger       hclog.Logger
	handlers     *sync.WaitGroup // counts running handler goroutines
	onClose      func(*Conn)     // called once, after the connection closed
	// reader, when set, is read instead of nc: a sniffed plaintext connection
	// replays its first byte through it while writes still go straight to the
	// socket (one writev per batch).
	reader io.Reader
	// tlsState is set for a TLS connection. Its writes go through a buffer: a
	// tls.Conn has no vectored write, and one Write per slice would make one TLS
	// record (and one syscall) per header and body part.
	tlsState *tls.ConnectionState
}

// outFrame is one queued frame: its encoded prefix and header, then cmd's body slices.
type outFrame struct {
	prefix []byte
	cmd    *Command
}

// Conn is one remoting connection, accepted by a Server or dialled by a Client. Requests
// arriving on it run concurrently (one goroutine each, bounded); all writes go through one
// writer goroutine so frames never interleave. It is safe for concurrent use.
type Conn struct {
	id     uint64
	nc     net.Conn
	remote string
	// remoteAP is remote parsed once (zero when it is not ip:port): the
	// broker stores it as every message's BORNHOST.
	remoteAP netip.AddrPort
	opts     connOptions
	logger   hclog.Logger

	ctx    context.Context // cancelled on Close; handed to handlers
	cancel context.CancelFunc
	// inlineCtx is ctx marked as served on the reader goroutine (IsInline).
	inlineCtx context.Context
	sem       chan struct{} // in-flight handler slots
	work      chan *Command // unbuffered: a request for an idle worker
	// inline is the handler's InlineHandler.Inline, nil when it has none.
	inline func(*Command) bool

	qmu     sync.Mutex
	queue   []outFrame // Invariant: empty once qclosed is set; every frame in it gets OnWritten exactly once.
	qclosed bool
	wake    chan struct{} // capacity 1: "queue not empty"

	pmu     sync.Mutex
	pending map[int32]pendingCall // opaque → waiter of a request this side sent
	// sweeping is set once the goroutine that times out InvokeAsync calls runs.
	sweeping atomic.Bool

	// peer is the language and version the other side put in its latest request
	// (Java's ClientChannelInfo keeps the heartbeat's); nil until one arrived.
	peer atomic.Pointer[peerInfo]

	closeOnce sync.Once
	closed    chan struct{}
	loops     sync.WaitGroup // reader + writer
}

type peerInfo struct {
	language string
	version  int16
}

func newConn(parent context.Context, nc net.Conn, opts connOptions) *Conn {
	if opts.maxFrame <= 0 {
		opts.maxFrame = DefaultMaxFrameSize
	}
	if opts.writeTimeout <= 0 {
		opts.writeTimeout = DefaultWriteTimeout
	}
	if opts.maxInFlight <= 0 {
		opts.maxInFlight = DefaultMaxInFlight
	}
	id := connIDs.Add(1)
	c := &Conn{
		id:      id,
		nc:      nc,
		remote:  nc.RemoteAddr().String(),
		opts:    opts,
		sem:     make(chan struct{}, opts.maxInFlight),
		work:    make(chan *Command),
		wake:    make(chan struct{}, 1),
		pending: make(map[int32]pendingCall),
		closed:  make(chan struct{}),
	}
	if ih, ok := opts.handler.(InlineHandler); ok {
		c.inline = ih.Inline
	}
	c.remoteAP, _ = netip.ParseAddrPort(c.remote)
	c.logger = opts.logger.With("conn", id, "remote", c.remote)
	c.ctx, c.cancel = context.WithCancel(parent)
	c.inlineCtx = context.WithValue(c.ctx, inlineKey{}, true)
	return c
}

// start launches the reader and writer goroutines.
func (c *Conn) start() {
	c.loops.Add(2)
	go c.writeLoop()
	go c.readLoop()
}

// ID is unique among the connections of this process.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr is the peer's "ip:port".
func (c *Conn) RemoteAddr() string { return c.remote }

// RemoteAddrPort is RemoteAddr parsed, or the zero AddrPort when the peer's
// address is not an ip:port (a pipe in tests).
func (c *Conn) RemoteAddrPort() netip.AddrPort { return c.remoteAP }

// TLS is the handshake's outcome (version, cipher, verified client certificates)
// on a TLS connection, or nil on a plaintext one. The caller must not modify it.
func (c *Conn) TLS() *tls.ConnectionState { return c.opts.tlsState }

// Closed is closed once the connection is closed.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// Close closes the connection: pending Invokes fail with ErrConnClosed, queued frames are
// dropped (their OnWritten still runs) and handler contexts are cancelled. Idempotent.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		c.cancel()
		err = c.socket().Close()
	})
	return err
}

// socket is what Close closes: the TCP connection itself, under TLS too. A
// tls.Conn's Close first writes close_notify under its own 5 s deadline, which a
// peer that stopped reading turns into a 5 s stall per connection on shutdown;
// frames are length-prefixed, so the peer loses nothing by not getting it.
func (c *Conn) socket() net.Conn {
	if tc, ok := c.nc.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c.nc
}

// Invoke sends req as a request and waits for the response with the same opaque, until
// ctx ends or the connection closes. It assigns req.Opaque and clears the response flag.
func (c *Conn) Invoke(ctx context.Context, req *Command) (*Command, error) {
	req.Opaque = nextOpaque()
	req.Flag &^= flagResponse | flagOneway
	ch := make(chan *Command, 1)
	c.pmu.Lock()
	c.pending[req.Opaque] = pendingCall{ch: ch}
	c.pmu.Unlock()
	if err := c.send(req); err != nil {
		c.forget(req.Opaque)
		return nil, c.invokeErr(req, err)
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		c.forget(req.Opaque)
		return nil, c.invokeErr(req, ctx.Err())
	case <-c.closed:
		c.forget(req.Opaque)
		select {
		case resp := <-ch: // answered just before the close
			return resp, nil
		default:
		}
		return nil, c.invokeErr(req, ErrConnClosed)
	}
}

// InvokeOneway sends req with the oneway flag and returns once it is queued for writing.
func (c *Conn) InvokeOneway(req *Command) error {
	req.Opaque = nextOpaque()
	req.Flag = req.Flag&^flagResponse | flagOneway
	if err := c.send(req); err != nil {
		return c.invokeErr(req, err)
	}
	return nil
}

func (c *Conn) invokeErr(req *Command, err error) error {
	return fmt.Errorf("invoke code=%d opaque=%d remote=%s: %w", req.Code, req.Opaque, c.remote, err)
}

func (c *Conn) forget(opaque int32) {
	c.pmu.Lock()
	delete(c.pending, opaque)
	c.pmu.Unlock()
}

// send encodes cmd in the caller's goroutine and queues it for the writer. On error
// cmd's OnWritten has already run.
func (c *Conn) send(cmd *Command) error {
	prefix, err := encodePrefix(cmd)
	if err != nil {
		cmd.written()
		return err
	}
	c.qmu.Lock()
	if c.qclosed {
		c.qmu.Unlock()
		cmd.written()
		return ErrConnClosed
	}
	c.queue = append(c.queue, outFrame{prefix: prefix, cmd: cmd})
	c.qmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // already signalled
	}
	return nil
}

// writeLoop is the only goroutine writing to the socket. It gathers queued frames into one
// vectored write (header, Body and BodyParts slices are never copied).
func (c *Conn) writeLoop() {
	defer c.loops.Done()
	defer c.failQueue()
	var backing net.Buffers
	var batch []outFrame
	var out io.Writer = c.nc
	var bw *bufio.Writer
	if c.opts.tlsState != nil {
		bw = bufio.NewWriterSize(c.nc, tlsWriteBufferSize)
		out = bw
	}
	for {
		select {
		case <-c.wake:
		case <-c.closed:
			return
		}
		// Let the goroutines that are about to queue a frame do so first: the
		// answers to one raft entry's senders, or a producer's window of sends,
		// become runnable together, and one writev for all of them is a fraction
		// of the system calls of one per frame.
		runtime.Gosched()
		for {
			c.qmu.Lock()
			n := min(len(c.queue), maxWriteBatch)
			batch = append(batch[:0], c.queue[:n]...)
			rest := copy(c.queue, c.queue[n:])
			clear(c.queue[rest:])
			c.queue = c.queue[:rest]
			c.qmu.Unlock()
			if n == 0 {
				break
			}
			bufs := backing[:0]
			for _, f := range batch {
				bufs = frameBuffers(bufs, f.prefix, f.cmd)
			}
			backing = bufs
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.opts.writeTimeout))
			_, err := bufs.WriteTo(out) // WriteTo consumes its receiver, not backing
			if err == nil && bw != nil {
				err = bw.Flush()
			}
			clear(backing)
			for i := range batch {
				batch[i].cmd.written()
				batch[i] = outFrame{}
			}
			if err != nil {
				if !c.isClosed() {
					c.logger.Debug("write failed, closing connection", "error", err)
				}
				_ = c.Close()
				return
			}
		}
	}
}

// failQueue stops further sends and releases the frames that will never be written.
func (c *Conn) failQueue() {
	c.qmu.Lock()
	c.qclosed = true
	dropped := c.queue
	c.queue = nil
	c.qmu.Unlock()
	for _, f := range dropped {
		f.cmd.written()
	}
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// readLoop decodes frames until the connection fails. Responses go to the waiting
// Invoke; requests each get a goroutine.
func (c *Conn) readLoop() {
	defer c.loops.Done()
	defer func() {
		_ = c.Close()
		c.failAsync()
		if c.opts.onClose != nil {
			c.opts.onClose(c)
		}
	}()
	var src io.Reader = c.nc
	if c.opts.reader != nil {
		src = c.opts.reader
	}
	if c.opts.readIdle > 0 {
		ir := newIdleReader(src, c.nc.SetReadDeadline, c.opts.readIdle)
		if err := ir.arm(); err != nil {
			c.logReadError(err)
			return
		}
		src = ir
	}
	br := bufio.NewReaderSize(src, readBufferSize)
	for {
		cmd, err := DecodeFrame(br, c.opts.maxFrame)
		if err != nil {
			c.logReadError(err)
			return
		}
		if cmd.IsResponse() {
			c.deliver(cmd)
			continue
		}
		c.notePeer(cmd)
		if c.opts.handler == nil {
			c.logger.Debug("dropping request: no handler", "code", cmd.RequestCode(), "opaque", cmd.Opaque)
			continue
		}
		select {
		case c.sem <- struct{}{}:
		case <-c.closed:
			return
		}
		c.opts.handlers.Add(1)
		if c.inline != nil && c.inline(cmd) {
			c.serve(c.inlineCtx, cmd)
			continue
		}
		select {
		case c.work <- cmd: // an idle worker took it
		default:
			go c.worker(cmd)
		}
	}
}

// workerIdle is how long a handler goroutine waits for the connection's next
// request before it exits.
const workerIdle = 5 * time.Second

// worker serves req, then the requests readLoop hands it while it is idle.
// Reusing goroutines (at most maxInFlight per connection, bounded by sem)
// saves a goroutine start and the stack growth of a fresh 8 KiB stack per
// request; a connection that goes quiet keeps none after one to two
// workerIdle periods. The timer is not re-armed per request (that cost ~1 % of
// a loaded leader's CPU): it ticks every workerIdle, and the worker exits at
// the first tick that finds it served nothing since the one before.
func (c *Conn) worker(req *Command) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	var served bool
	for ok := true; ok; req, ok = c.nextRequest(idle, &served) {
		c.serve(c.ctx, req)
		served = true
	}
}

// nextRequest waits for the next request readLoop hands this worker. It
// returns false when the connection closed, or when idle ticks and the worker
// served nothing since the previous tick (served, which it then clears).
func (c *Conn) nextRequest(idle *time.Timer, served *bool) (*Command, bool) {
	for {
		select {
		case req := <-c.work:
			return req, true
		case <-idle.C:
			if !*served {
				return nil, false
			}
			*served = false
			idle.Reset(workerIdle)
		case <-c.closed:
			return nil, false
		}
	}
}

// notePeer remembers the language and version a request announced; only a
// change costs an allocation.
func (c *Conn) notePeer(req *Command) {
	if p := c.peer.Load(); p != nil && p.language == req.Language && p.version == req.Version {
		return
	}
	// Clone: the decoded Language may be a substring of the whole header.
	c.peer.Store(&peerInfo{language: strings.Clone(req.Language), version: req.Version})
}

// Peer returns the language (LanguageCode name) and version (MQVersion ordinal)
// the other side announced in its latest request, as RocketMQ's consumer and
// producer connection lists report them; ok is false before its first request.
func (c *Conn) Peer() (language string, version int16, ok bool) {
	p := c.peer.Load()
	if p == nil {
		return "", 0, false
	}
	return p.language, p.version, true
}

func (c *Conn) logReadError(err error) {
	switch {
	case c.isClosed() || errors.Is(err, net.ErrClosed):
		// closed by this side; nothing to report
	case errors.Is(err, ErrMalformedFrame) || errors.Is(err, ErrFrameTooLarge):
		c.logger.Warn("closing connection: undecodable frame", "error", err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.logger.Info("closing idle connection", "idle", c.opts.readIdle)
	case errors.Is(err, io.EOF):
		c.logger.Debug("peer closed connection")
	default:
		c.logger.Debug("closing connection: read failed", "error", err)
	}
}

func (c *Conn) deliver(resp *Command) {
	c.pmu.Lock()
	call, ok := c.pending[resp.Opaque]
	delete(c.pending, resp.Opaque)
	c.pmu.Unlock()
	if !ok {
		// Late reply after a timeout, or a peer answering a oneway request.
		c.logger.Debug("dropping response with unknown opaque", "opaque", resp.Opaque, "code", resp.ResponseCode())
		return
	}
	if call.done != nil {
		call.done(resp, nil)
		return
	}
	call.ch <- resp // buffered, one send per registration
}

// InlineHandler is a Handler that serves some requests on the connection's
// reader goroutine instead of handing them to a handler goroutine: one
// goroutine hand-off less per request. A request Inline reports true for must
// not block its handler: it is answered at once, or deferred (Deferred) and
// handed on. The reader reads nothing else meanwhile.
type InlineHandler interface {
	Handler
	Inline(req *Command) bool
}

// inlineKey marks the context of a request served on the reader goroutine.
type inlineKey struct{}

// IsInline reports whether ctx is that of a request served on its
// connection's reader goroutine (InlineHandler): its handler must not block.
func IsInline(ctx context.Context) bool {
	v, _ := ctx.Value(inlineKey{}).(bool)
	return v
}

// Blocking is ctx for work handed from an inline request to a goroutine of
// its own, which may block: IsInline is false for it.
func Blocking(ctx context.Context) context.Context {
	if !IsInline(ctx) {
		return ctx
	}
	return context.WithValue(ctx, inlineKey{}, false)
}

// Deferred is what a handler returns when it answers later: exactly once,
// through Conn.Answer. Until then the request keeps its in-flight slot and
// counts as running (Server.Close waits for it), but no goroutine waits for
// it: a send waiting for its raft entry costs no parked handler goroutine and
// no wake-up per message when the entry is applied.
var Deferred = &Command{}

// serve runs the handler for one request and queues its response. A handler panic is
// logged with its stack and answered with SYSTEM_ERROR instead of taking the process
// down: one bad request must not drop every client of the broker.
func (c *Conn) serve(ctx context.Context, req *Command) {
	resp := c.callHandler(ctx, req)
	if resp == Deferred {
		return // Answer releases the slot
	}
	c.answer(req, resp)
}

// Answer completes a request whose handler returned Deferred: it sends what
// answer returns, as serve sends a handler's response (nil: nothing is sent).
// A panic in answer is logged and answered SYSTEM_ERROR, as in a handler.
// answer may return Deferred again when it hands the request on once more
// (then a later Answer completes it).
func (c *Conn) Answer(req *Command, answer func() *Command) {
	resp := c.call(req, answer)
	if resp == Deferred {
		return
	}
	c.answer(req, resp)
}

// answer queues resp as the response to req and releases req's slot.
func (c *Conn) answer(req *Command, resp *Command) {
	defer func() {
		<-c.sem
		c.opts.handlers.Done()
	}()
	if resp == nil {
		return
	}
	if req.IsOneway() {
		resp.written() // Java semantics: a oneway request is never answered
		return
	}
	resp.Opaque = req.Opaque
	resp.Flag |= flagResponse
	// Answer in the request's header encoding (Apache's NettyRemotingAbstract
	// does), unless the handler pre-encoded extFields for another one.
	resp.Serialize = req.Serialize
	if resp.Ext.Data != nil {
		resp.Serialize = resp.Ext.Type
	}
	if err := c.send(resp); err != nil {
		c.logger.Debug("response not sent", "code", req.RequestCode(), "opaque", req.Opaque, "error", err)
	}
}

func (c *Conn) callHandler(ctx context.Context, req *Command) *Command {
	return c.call(req, func() *Command { return c.opts.handler.ServeRemoting(ctx, c, req) })
}

// call runs f for req, answering a panic with SYSTEM_ERROR.
func (c *Conn) call(req *Command, f func() *Command) (resp *Command) {
	defer func() {
		if r := recover(); r != nil {
			c.logger.Error("handler panicked", "code", req.RequestCode(), "opaque", req.Opaque,
				"panic", r, "stack", string(debug.Stack()))
			resp = NewResponse(SystemError, "internal error")
		}
	}()
	return f()
}
