package transport

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// ErrInvalidAdvertise: the address a stream layer advertises cannot be dialled by peers.
var ErrInvalidAdvertise = errors.New("transport: advertise address not dialable")

// StreamLayer is a raft.StreamLayer over plain TCP on its own port (not the remoting
// port): raft's NetworkTransport frames its own RPCs on the connections it accepts and
// dials here. Wrap it with raft.NewNetworkTransport.
type StreamLayer struct {
	ln        net.Listener
	advertise net.Addr
}

var _ raft.StreamLayer = (*StreamLayer)(nil)

// NewTCPStreamLayer listens on bindAddr. advertise is the address peers dial (it goes into
// the raft configuration); nil means the listener's address, which must then not be a
// wildcard like 0.0.0.0.
func NewTCPStreamLayer(bindAddr string, advertise net.Addr) (*StreamLayer, error) {
	ln, err := net.Listen("tcp", bindAddr)
	if err != nil {
		return nil, fmt.Errorf("raft stream listen addr=%s: %w", bindAddr, err)
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	tcp, ok := advertise.(*net.TCPAddr)
	if !ok {
		if tcp, err = net.ResolveTCPAddr("tcp", advertise.String()); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("raft stream advertise=%s: %v: %w", advertise, err, ErrInvalidAdvertise)
		}
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() || tcp.Port == 0 {
		_ = ln.Close()
		return nil, fmt.Errorf("raft stream advertise=%s: %w", advertise, ErrInvalidAdvertise)
	}
	return &StreamLayer{ln: ln, advertise: tcp}, nil
}

// Accept waits for the next inbound raft connection.
func (s *StreamLayer) Accept() (net.Conn, error) { return s.ln.Accept() }

// Close stops listening. Established connections belong to raft's transport.
func (s *StreamLayer) Close() error { return s.ln.Close() }

// Addr is the advertised address.
func (s *StreamLayer) Addr() net.Addr { return s.advertise }

// Dial connects to a peer's stream layer.
func (s *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("raft stream dial addr=%s: %w", address, err)
	}
	return nc, nil
}
