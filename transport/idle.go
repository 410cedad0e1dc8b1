package transport

import (
	"errors"
	"io"
	"os"
	"time"
)

// idleChecks is how many read deadlines make up one idle timeout: a silent
// peer is cut off between readIdle and readIdle + readIdle/idleChecks after
// its last byte.
const idleChecks = 16

// idleReader cuts off a connection whose peer sent nothing for idle, without
// reading the clock per frame. The read deadline is armed one check period
// (idle/idleChecks) ahead; when it passes, the reader looks whether any bytes
// arrived in that period. If some did, or the silence is still shorter than
// idle, it arms the next period and reads on; otherwise it returns the
// timeout, which the caller takes as an idle peer.
//
// A frame-by-frame check ("move the deadline when the last move is older than
// idle/16") read the clock once per frame, ~70 ns on our VMs, on both sides
// of every request. Here a busy connection reads it once per period. It also
// no longer cuts off a peer whose single large frame takes longer than idle
// to arrive while bytes keep coming.
//
// A deadline that passes inside a read returns no bytes, or the bytes read so
// far without an error, so a retried read continues the stream where it
// stopped (crypto/tls keeps its partial record on a timeout too).
type idleReader struct {
	r        io.Reader
	deadline func(time.Time) error // the connection's SetReadDeadline
	period   time.Duration
	periods  int // check periods that passed in silence
	heard    bool
}

func newIdleReader(r io.Reader, setDeadline func(time.Time) error, idle time.Duration) *idleReader {
	return &idleReader{r: r, deadline: setDeadline, period: max(idle/idleChecks, time.Millisecond)}
}

// arm sets the first deadline; call it before the first Read.
func (ir *idleReader) arm() error { return ir.deadline(time.Now().Add(ir.period)) }

func (ir *idleReader) Read(p []byte) (int, error) {
	for {
		n, err := ir.r.Read(p)
		if n > 0 {
			ir.heard = true
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		if ir.heard {
			ir.periods = 0
		} else {
			ir.periods++
		}
		ir.heard = false
		if ir.periods >= idleChecks {
			return n, err
		}
		if derr := ir.deadline(time.Now().Add(ir.period)); derr != nil {
			return n, derr
		}
		if n > 0 {
			return n, nil
		}
	}
}
