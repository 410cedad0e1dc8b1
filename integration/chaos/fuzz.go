package chaos

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// MalformedFrame returns one bad frame: random bytes, a valid frame with a few
// bytes flipped, a valid frame cut short, or a valid frame with a lying length.
func MalformedFrame(rng *rand.Rand, valid [][]byte) []byte {
	switch rng.IntN(4) {
	case 0:
		b := make([]byte, 1+rng.IntN(512))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	case 1:
		b := append([]byte(nil), valid[rng.IntN(len(valid))]...)
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.UintN(255))
		}
		return b
	case 2:
		v := valid[rng.IntN(len(valid))]
		return append([]byte(nil), v[:rng.IntN(len(v))]...)
	default:
		b := append([]byte(nil), valid[rng.IntN(len(valid))]...)
		lies := []uint32{0, 1, 3, 0x7fffffff, 0xffffffff, uint32(transport.DefaultMaxFrameSize + 1), uint32(len(b) + 1 + rng.IntN(4096))}
		if rng.IntN(2) == 0 {
			binary.BigEndian.PutUint32(b[0:], lies[rng.IntN(len(lies))])
		} else {
			binary.BigEndian.PutUint32(b[4:], rng.Uint32()) // serialize type and header length
		}
		return b
	}
}

// ValidFrames encodes a few well-formed requests to mutate.
func ValidFrames() [][]byte {
	reqs := []*transport.Command{
		transport.NewRequest(transport.SendMessage, map[string]string{"producerGroup": "g", "topic": "FuzzT", "queueId": "0", "sysFlag": "0", "bornTimestamp": "1", "flag": "0", "properties": "", "reconsumeTimes": "0", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4"}, []byte("fuzz")),
		transport.NewRequest(transport.PullMessage, map[string]string{"consumerGroup": "g", "topic": "FuzzT", "queueId": "0", "queueOffset": "0", "maxMsgNums": "32", "sysFlag": "4", "subscription": "*"}, nil),
		transport.NewRequest(transport.GetRouteInfoByTopic, map[string]string{"topic": "FuzzT"}, nil),
		transport.NewRequest(transport.HeartBeat, nil, []byte(`{"clientID":"x","producerDataSet":[],"consumerDataSet":[]}`)),
		transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil),
	}
	var out [][]byte
	for i, r := range reqs {
		r.Opaque = int32(i + 1)
		b, err := transport.AppendFrame(nil, r)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// SendMalformed opens a connection per batch of frames to addr and writes them,
// reconnecting whenever the server closes; it returns how many frames it wrote.
// Answers are read and dropped so the server never blocks on a full socket.
func SendMalformed(addr string, frames int, rng *rand.Rand, valid [][]byte) int {
	sent := 0
	for sent < frames {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := conn.Read(buf); err != nil {
					return
				}
			}
		}()
		for range 1 + rng.IntN(20) {
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := conn.Write(MalformedFrame(rng, valid)); err != nil {
				break
			}
			sent++
			if sent == frames {
				break
			}
		}
		_ = conn.Close()
	}
	return sent
}
