package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// A ROCKETMQ command written by this side decodes to the same fields, from a
// map and from an ExtWriter alike, and its frame says ROCKETMQ in byte 4.
func TestRocketMQHeaderRoundTrip(t *testing.T) {
	ext := map[string]string{"topic": "T\x01opic", "queueId": "3", "properties": "KEYS\x01k 1\x02", "unicode": "é€"}
	keys := slices.Sorted(maps.Keys(ext))
	w := NewExtWriter(SerializeRocketMQ, 0)
	for _, k := range keys {
		if k == "queueId" {
			w.AddInt(k, 3)
			continue
		}
		w.Add(k, ext[k])
	}
	for name, c := range map[string]*Command{
		"map":    {Code: 310, Language: "JAVA", Version: 401, Opaque: 77, Flag: 2, Remark: "r€mark", ExtFields: ext, Serialize: SerializeRocketMQ, Body: []byte("body")},
		"writer": {Code: 310, Language: "JAVA", Version: 401, Opaque: 77, Flag: 2, Remark: "r€mark", Ext: w.Ext(), Serialize: SerializeRocketMQ, Body: []byte("body")},
	} {
		frame, err := AppendFrame(nil, c)
		if err != nil {
			t.Fatal(name, err)
		}
		if frame[4] != byte(SerializeRocketMQ) {
			t.Fatalf("%s: serialize byte %d, want 1", name, frame[4])
		}
		got, err := DecodeFrame(bytes.NewReader(frame), 0)
		if err != nil {
			t.Fatal(name, err)
		}
		want := *c
		want.Ext = EncodedExt{}
		want.ExtFields = ext
		if got.Code != want.Code || got.Language != want.Language || got.Version != want.Version ||
			got.Opaque != want.Opaque || got.Flag != want.Flag || got.Remark != want.Remark ||
			got.Serialize != SerializeRocketMQ || !maps.Equal(got.Fields(), ext) || string(got.Body) != "body" {
			t.Fatalf("%s: decoded %+v, want %+v", name, got, want)
		}
	}
}

// The writer's binary table is RocketMQSerializable's layout (the hand-built
// binaryHeader of codec_test.go), and its JSON is what a map of the same
// fields encodes to.
func TestExtWriterLayouts(t *testing.T) {
	w := NewExtWriter(SerializeRocketMQ, 0)
	w.Add("a", "x\"y")
	w.AddInt("b", -12)
	w.Add("c", "")
	c := &Command{Code: 1, Language: "GO", Version: 401, Opaque: 5, Ext: w.Ext(), Serialize: SerializeRocketMQ}
	want := binaryHeader(1, 9, 401, 5, 0, "", [][2]string{{"a", "x\"y"}, {"b", "-12"}, {"c", ""}})
	if got, err := appendBinaryHeader(nil, c); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("binary header\n got %q\nwant %q", got, want)
	}

	j := NewExtWriter(SerializeJSON, 0)
	j.Add("a", "x\"y\n\x01")
	j.AddInt("b", -12)
	j.Add("c", "")
	fromWriter := appendJSONHeader(nil, &Command{Code: 1, Ext: j.Ext()})
	fromMap := appendJSONHeader(nil, &Command{Code: 1, ExtFields: map[string]string{"a": "x\"y\n\x01", "b": "-12", "c": ""}})
	if !bytes.Equal(fromWriter, fromMap) {
		t.Fatalf("JSON header\n writer %s\n    map %s", fromWriter, fromMap)
	}
	empty := NewExtWriter(SerializeJSON, 0)
	if got := string(empty.Ext().Data); got != "{}" {
		t.Fatalf("empty JSON ext %q", got)
	}
}

// extFields encoded for one layout in a header of the other is a caller's bug:
// refused, never written as garbage.
func TestEncodeRefusesExtOfAnotherLayout(t *testing.T) {
	w := NewExtWriter(SerializeRocketMQ, 0)
	w.Add("k", "v")
	_, err := AppendFrame(nil, &Command{Code: 1, Ext: w.Ext()}) // a JSON header
	if err == nil || !strings.Contains(err.Error(), "extFields encoded as ROCKETMQ in a JSON header") {
		t.Fatalf("err = %v", err)
	}
	if _, err := AppendFrame(nil, &Command{Code: 1, Serialize: 7}); err == nil {
		t.Fatal("serialize type 7 encoded")
	}
	long := map[string]string{strings.Repeat("k", 1<<15): "v"}
	if _, err := AppendFrame(nil, &Command{Code: 1, Serialize: SerializeRocketMQ, ExtFields: long}); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("32 KiB key in a ROCKETMQ header: err = %v", err)
	}
}

// The server answers in the request's header encoding, as Apache's
// NettyRemotingAbstract does (response.setSerializeTypeCurrentRPC), including
// a response whose extFields the handler pre-encoded for that encoding.
func TestServerAnswersInTheRequestsEncoding(t *testing.T) {
	h := HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		resp := NewResponse(Success, "")
		if req.Field("pre") == "1" {
			w := NewExtWriter(req.Serialize, 0)
			w.Add("echo", req.Field("v"))
			resp.Ext = w.Ext()
			return resp
		}
		resp.ExtFields = map[string]string{"echo": req.Field("v")}
		return resp
	})
	s := startServer(t, ServerConfig{}, h)
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		for _, pre := range []string{"0", "1"} {
			nc := rawDial(t, s.Addr())
			req := &Command{Code: int16(HeartBeat), Language: "JAVA", Version: 401, Opaque: 9, Serialize: st,
				ExtFields: map[string]string{"v": "value-" + st.String(), "pre": pre}}
			frame, err := AppendFrame(nil, req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Write(frame); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(nc)
			head, err := br.Peek(8)
			if err != nil {
				t.Fatal(err)
			}
			if got := SerializeType(binary.BigEndian.Uint32(head[4:]) >> 24); got != st {
				t.Fatalf("request %s (pre-encoded %s): answered in %s", st, pre, got)
			}
			resp, err := DecodeFrame(br, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !resp.IsResponse() || resp.Opaque != 9 || resp.Field("echo") != "value-"+st.String() {
				t.Fatalf("request %s (pre-encoded %s): response %v", st, pre, resp)
			}
		}
	}
	// And through this side's client: a ROCKETMQ request comes back decoded.
	c := newClient(t, ClientConfig{})
	req := NewRequest(HeartBeat, map[string]string{"v": "x"}, nil)
	req.Serialize = SerializeRocketMQ
	resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), req)
	if err != nil || resp.Serialize != SerializeRocketMQ || resp.Field("echo") != "x" {
		t.Fatalf("client invoke: resp=%v err=%v", resp, err)
	}
}
