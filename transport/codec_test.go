package transport

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goClientRequest is the frame of §1.1 of the protocol notes, exactly as rocketmq-client-go
// writes it (verified by running it): frameLen 0x67, JSON type, headerLen 0x5f, body "BODY".
func goClientRequest() []byte {
	header := `{"code":10,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"k":"v"}}`
	var b []byte
	b = append(b, 0x00, 0x00, 0x00, 0x67)
	b = append(b, 0x00, 0x00, 0x00, 0x5f)
	b = append(b, header...)
	return append(b, "BODY"...)
}

func TestDecodeGoClientRequest(t *testing.T) {
	frame := goClientRequest()
	if len(frame) != 4+0x67 {
		t.Fatalf("hand-built frame is %d bytes, want %d", len(frame), 4+0x67)
	}
	cmd, err := DecodeFrame(bytes.NewReader(frame), 0)
	if err != nil {
		t.Fatalf("DecodeFrame: %v", err)
	}
	want := &Command{Code: 10, Language: "GO", Version: 317, Opaque: 1, Flag: 0,
		ExtFields: map[string]string{"k": "v"}, Body: []byte("BODY")}
	assertCommand(t, cmd, want)
	if cmd.RequestCode() != SendMessage || cmd.IsResponse() || cmd.IsOneway() {
		t.Fatalf("code=%v response=%v oneway=%v", cmd.RequestCode(), cmd.IsResponse(), cmd.IsOneway())
	}
}

// binaryHeader builds a ROCKETMQ header by hand, following RocketMQSerializable.
func binaryHeader(code int16, lang byte, version int16, opaque, flag int32, remark string, ext [][2]string) []byte {
	be := binary.BigEndian
	var h []byte
	h = be.AppendUint16(h, uint16(code))
	h = append(h, lang)
	h = be.AppendUint16(h, uint16(version))
	h = be.AppendUint32(h, uint32(opaque))
	h = be.AppendUint32(h, uint32(flag))
	h = be.AppendUint32(h, uint32(len(remark)))
	h = append(h, remark...)
	var e []byte
	for _, kv := range ext {
		e = be.AppendUint16(e, uint16(len(kv[0])))
		e = append(e, kv[0]...)
		e = be.AppendUint32(e, uint32(len(kv[1])))
		e = append(e, kv[1]...)
	}
	h = be.AppendUint32(h, uint32(len(e)))
	return append(h, e...)
}

func rawFrame(st SerializeType, header, body []byte) []byte {
	be := binary.BigEndian
	var f []byte
	f = be.AppendUint32(f, uint32(4+len(header)+len(body)))
	f = be.AppendUint32(f, uint32(st)<<24|uint32(len(header)))
	f = append(f, header...)
	return append(f, body...)
}

func TestDecodeRocketMQBinaryHeader(t *testing.T) {
	h := binaryHeader(34, 0 /* JAVA */, 479, 77, 0, "hi", [][2]string{{"clientID", "10.0.0.1@1"}, {"n", ""}})
	if got := len(h); got != binaryFixedLen+2+(2+8+4+10)+(2+1+4) {
		t.Fatalf("hand-built header is %d bytes", got)
	}
	cmd, err := DecodeFrame(bytes.NewReader(rawFrame(SerializeRocketMQ, h, []byte("{}"))), 0)
	if err != nil {
		t.Fatalf("DecodeFrame: %v", err)
	}
	// "n" has an empty value, which Java reads as null: absent.
	assertCommand(t, cmd, &Command{Code: 34, Language: "JAVA", Version: 479, Opaque: 77, Remark: "hi",
		ExtFields: map[string]string{"clientID": "10.0.0.1@1"}, Body: []byte("{}")})

	// A response (flag bit0) with no remark, no ext, no body, negative opaque.
	h = binaryHeader(17, 9 /* GO */, 317, -5, 1, "", nil)
	cmd, err = DecodeFrame(bytes.NewReader(rawFrame(SerializeRocketMQ, h, nil)), 0)
	if err != nil {
		t.Fatalf("DecodeFrame: %v", err)
	}
	assertCommand(t, cmd, &Command{Code: 17, Language: "GO", Version: 317, Opaque: -5, Flag: 1})
	if !cmd.IsResponse() || cmd.ResponseCode() != TopicNotExist {
		t.Fatalf("response=%v code=%v", cmd.IsResponse(), cmd.ResponseCode())
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []*Command{
		NewRequest(SendMessage, map[string]string{"topic": "T", "queueId": "3", "bname": "broker-a"}, []byte("hello")),
		NewResponse(Success, ""),
		NewResponse(SystemError, "quote \" backslash \\ newline \n tab \t ctl \x01 unicode é 中文 \u2028"),
		{Code: 11, Language: "JAVA", Version: -1, Opaque: -2147483648, Flag: 2, ExtFields: map[string]string{"": "", "k\"": "v\x00"}},
		{Code: 0, Flag: 1, Opaque: 2147483647, Body: []byte("a"), BodyParts: [][]byte{[]byte("bc"), nil, []byte("def")}},
		{Code: -1, Language: "GO", Body: bytes.Repeat([]byte{0xff}, 70000)},
	}
	for i, c := range cases {
		var buf bytes.Buffer
		if err := EncodeFrame(&buf, c); err != nil {
			t.Fatalf("case %d: EncodeFrame: %v", i, err)
		}
		appended, err := AppendFrame([]byte("prefix"), c)
		if err != nil {
			t.Fatalf("case %d: AppendFrame: %v", i, err)
		}
		if !bytes.Equal(appended[len("prefix"):], buf.Bytes()) {
			t.Fatalf("case %d: AppendFrame and EncodeFrame differ", i)
		}
		r := bytes.NewReader(buf.Bytes())
		got, err := DecodeFrame(r, 0)
		if err != nil {
			t.Fatalf("case %d: DecodeFrame: %v", i, err)
		}
		if r.Len() != 0 {
			t.Fatalf("case %d: %d bytes left after the frame", i, r.Len())
		}
		want := *c
		want.Body = append(append([]byte(nil), c.Body...), bytes.Join(c.BodyParts, nil)...)
		want.BodyParts = nil
		if want.Language == "" {
			want.Language = "GO"
		}
		if len(want.Fields()) == 0 {
			want.ExtFields = map[string]string{} // encoded as {} and decoded as empty map
		}
		assertCommand(t, got, &want)
	}
}

// TestInvalidUTF8IsReplaced: the header stays valid JSON whatever the strings hold.
func TestInvalidUTF8IsReplaced(t *testing.T) {
	c := NewResponse(SystemError, "bad \xff\xfe end")
	c.ExtFields = map[string]string{"k\xc3": "v\x80"}
	frame, err := AppendFrame(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeFrame(bytes.NewReader(frame), 0)
	if err != nil {
		t.Fatalf("DecodeFrame: %v", err)
	}
	if got.Remark != "bad \ufffd\ufffd end" || got.Field("k\ufffd") != "v\ufffd" {
		t.Fatalf("remark=%q ext=%q", got.Remark, got.Fields())
	}
}

// TestEncodedHeaderShape checks what the Go client and Java need: every extFields value a
// JSON string, numbers within their Go types, serializeTypeCurrentRPC "JSON".
func TestEncodedHeaderShape(t *testing.T) {
	c := NewResponse(PullNotFound, "no new message")
	c.Opaque = 42
	c.ExtFields = map[string]string{"nextBeginOffset": "12", "minOffset": "0", "maxOffset": "12", "suggestWhichBrokerId": "0"}
	frame, err := AppendFrame(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	headerLen := binary.BigEndian.Uint32(frame[4:8])
	if frame[4] != 0 {
		t.Fatalf("serialize type byte %d, want 0 (JSON)", frame[4])
	}
	var raw map[string]any
	if err := json.Unmarshal(frame[8:8+headerLen], &raw); err != nil {
		t.Fatalf("header is not JSON: %v\n%s", err, frame[8:8+headerLen])
	}
	for _, k := range []string{"code", "language", "version", "opaque", "flag", "remark", "extFields", "serializeTypeCurrentRPC"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("header lacks %q", k)
		}
	}
	if raw["serializeTypeCurrentRPC"] != "JSON" || raw["language"] != "GO" {
		t.Errorf("serializeTypeCurrentRPC=%v language=%v", raw["serializeTypeCurrentRPC"], raw["language"])
	}
	for k, v := range raw["extFields"].(map[string]any) {
		if _, ok := v.(string); !ok {
			t.Errorf("extFields[%q] is %T, must be a JSON string", k, v)
		}
	}
	// Decode it with the field types the Go client uses.
	var goShape struct {
		Code      int16             `json:"code"`
		Version   int16             `json:"version"`
		Opaque    int32             `json:"opaque"`
		Flag      int32             `json:"flag"`
		Remark    string            `json:"remark"`
		ExtFields map[string]string `json:"extFields"`
	}
	if err := json.Unmarshal(frame[8:8+headerLen], &goShape); err != nil {
		t.Fatalf("Go-client-shaped decode: %v", err)
	}
	if goShape.Code != 19 || goShape.Opaque != 42 || goShape.Flag != 1 || goShape.ExtFields["nextBeginOffset"] != "12" {
		t.Fatalf("decoded %+v", goShape)
	}
}

// hugeClaimReader claims a frame of the given length and then yields endless zeros,
// counting what it hands out.
type hugeClaimReader struct {
	claim uint32
	off   int
	read  int
}

func (r *hugeClaimReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off < 4 {
			var l [4]byte
			binary.BigEndian.PutUint32(l[:], r.claim)
			p[n] = l[r.off]
		} else {
			p[n] = 0
		}
		r.off++
		n++
	}
	r.read += n
	return n, nil
}

func TestOversizeFrameRejectedBeforeAllocating(t *testing.T) {
	r := &hugeClaimReader{claim: 1 << 30}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := DecodeFrame(r, DefaultMaxFrameSize)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if r.read != 4 {
		t.Fatalf("read %d bytes, want only the 4-byte length", r.read)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 { // far below the 1 GiB claimed; slack for the runtime
		t.Fatalf("allocated %d bytes for a rejected frame", alloc)
	}
	if elapsed > time.Second {
		t.Fatalf("took %v", elapsed)
	}
	// 0xFFFFFFFF is negative as Java's int32: also too large, never a negative length.
	r = &hugeClaimReader{claim: 0xFFFFFFFF}
	if _, err := DecodeFrame(r, DefaultMaxFrameSize); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("negative length: err = %v", err)
	}
}

// TestTruncatedLargeFrameAllocatesLazily: a peer announcing a frame under the limit and
// sending little of it costs memory in proportion to what it sent.
func TestTruncatedLargeFrameAllocatesLazily(t *testing.T) {
	frame := rawFrame(SerializeJSON, []byte(`{"code":10}`), nil)
	binary.BigEndian.PutUint32(frame[0:4], 15<<20) // claims 15 MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeFrame(bytes.NewReader(frame), DefaultMaxFrameSize)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*eagerAllocLimit {
		t.Fatalf("allocated %d bytes for a frame that sent %d", alloc, len(frame))
	}
}

func TestDecodeFrameLargeBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16+7) // > eagerAllocLimit, not a power of two
	frame, err := AppendFrame(nil, NewRequest(PullMessage, nil, body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeFrame(io.MultiReader(bytes.NewReader(frame[:1000]), bytes.NewReader(frame[1000:])), 0)
	if err != nil {
		t.Fatalf("DecodeFrame: %v", err)
	}
	if !bytes.Equal(got.Body, body) {
		t.Fatalf("body differs: %d vs %d bytes", len(got.Body), len(body))
	}
}

func TestTruncatedFrames(t *testing.T) {
	frame, err := AppendFrame(nil, NewRequest(HeartBeat, map[string]string{"a": "b"}, []byte("body")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeFrame(bytes.NewReader(nil), 0); err != io.EOF {
		t.Fatalf("empty stream: err = %v, want exactly io.EOF", err)
	}
	for n := 1; n < len(frame); n++ {
		cmd, err := DecodeFrame(bytes.NewReader(frame[:n]), 0)
		if err == nil || cmd != nil {
			t.Fatalf("prefix of %d/%d bytes decoded: %v", n, len(frame), cmd)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("prefix of %d bytes: err = %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}

func TestMalformedFrames(t *testing.T) {
	okJSON := []byte(`{"code":10,"opaque":1}`)
	be := binary.BigEndian
	cases := map[string][]byte{
		"frame length below 4":    {0, 0, 0, 3, 0, 0, 0, 0},
		"header beyond frame":     append(be.AppendUint32(be.AppendUint32(nil, 4+2), 10), "0123456789"...),
		"unknown serialize type":  rawFrame(SerializeType(2), okJSON, nil),
		"empty JSON header":       rawFrame(SerializeJSON, nil, []byte("x")),
		"not JSON":                rawFrame(SerializeJSON, []byte("{code:10}"), nil),
		"code beyond int16":       rawFrame(SerializeJSON, []byte(`{"code":40000}`), nil),
		"version beyond int16":    rawFrame(SerializeJSON, []byte(`{"code":34,"version":40000}`), nil),
		"opaque beyond int32":     rawFrame(SerializeJSON, []byte(`{"opaque":2147483648}`), nil),
		"language an object":      rawFrame(SerializeJSON, []byte(`{"language":{}}`), nil),
		"binary short fixed part": rawFrame(SerializeRocketMQ, make([]byte, 20), nil),
		"binary negative remark":  rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "", nil), 13, 0xFFFFFFFF), nil),
		"binary remark too long":  rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "ab", nil), 13, 3), nil),
		"binary ext too long":     rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "", nil), 17, 1), nil),
		"binary ext negative":     rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "", nil), 17, 0x80000000), nil),
		"binary trailing bytes":   rawFrame(SerializeRocketMQ, append(binaryHeader(1, 0, 0, 0, 0, "", nil), 0), nil),
		"binary key negative":     rawFrame(SerializeRocketMQ, setUint16(binaryHeader(1, 0, 0, 0, 0, "", [][2]string{{"k", "v"}}), 21, 0x8000), nil),
		"binary value negative":   rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "", [][2]string{{"k", "v"}}), 24, 0xFFFFFFFE), nil),
		"binary value too long":   rawFrame(SerializeRocketMQ, setUint32(binaryHeader(1, 0, 0, 0, 0, "", [][2]string{{"k", "v"}}), 24, 2), nil),
	}
	for name, frame := range cases {
		t.Run(name, func(t *testing.T) {
			cmd, err := DecodeFrame(bytes.NewReader(frame), 0)
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("err = %v (cmd %v), want ErrMalformedFrame", err, cmd)
			}
		})
	}
}

func setUint32(b []byte, off int, v uint32) []byte { binary.BigEndian.PutUint32(b[off:], v); return b }
func setUint16(b []byte, off int, v uint16) []byte { binary.BigEndian.PutUint16(b[off:], v); return b }

// TestJSONHeaderLeniency: what real peers send beyond our own output still decodes.
func TestJSONHeaderLeniency(t *testing.T) {
	cases := map[string]*Command{
		// Java's fastjson output: sorted keys, no remark, serializeTypeCurrentRPC.
		`{"code":0,"extFields":{"a":"1"},"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`: {
			Code: 0, Flag: 1, Language: "JAVA", Opaque: 7, Version: 479, ExtFields: map[string]string{"a": "1"}},
		`{"code":34,"remark":null,"extFields":null,"language":9}`: {Code: 34, Language: "GO"},
		`{"code":34,"unknownKey":[1,2,{"x":null}]}`:               {Code: 34},
	}
	for header, want := range cases {
		got, err := DecodeHeader(SerializeJSON, []byte(header))
		if err != nil {
			t.Fatalf("%s: %v", header, err)
		}
		assertCommand(t, got, want)
	}
}

func TestCodeStrings(t *testing.T) {
	if got := SendMessage.String(); got != "SEND_MESSAGE(10)" {
		t.Errorf("SendMessage = %q", got)
	}
	if got := PullOffsetMoved.String(); got != "PULL_OFFSET_MOVED(21)" {
		t.Errorf("PullOffsetMoved = %q", got)
	}
	if got := RequestCode(9999).String(); got != "UNKNOWN(9999)" {
		t.Errorf("9999 = %q", got)
	}
	s := NewRequest(GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil).String()
	if !strings.Contains(s, "GET_ROUTEINFO_BY_TOPIC(105)") {
		t.Errorf("Command.String() = %q", s)
	}
}

func assertCommand(t *testing.T, got, want *Command) {
	t.Helper()
	if got.Code != want.Code || got.Language != want.Language || got.Version != want.Version ||
		got.Opaque != want.Opaque || got.Flag != want.Flag || got.Remark != want.Remark {
		t.Fatalf("header mismatch:\n got  code=%d lang=%q version=%d opaque=%d flag=%d remark=%q\n want code=%d lang=%q version=%d opaque=%d flag=%d remark=%q",
			got.Code, got.Language, got.Version, got.Opaque, got.Flag, got.Remark,
			want.Code, want.Language, want.Version, want.Opaque, want.Flag, want.Remark)
	}
	if len(got.Fields()) != len(want.Fields()) || !maps.Equal(got.Fields(), want.Fields()) {
		t.Fatalf("ext = %q, want %q", got.Fields(), want.Fields())
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("body = %d bytes %q, want %d bytes", len(got.Body), truncate(got.Body), len(want.Body))
	}
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// TestFastJSONPath: the headers real clients send take the hand-written path (and agree
// with the lenient decoder); odd ones fall back and still decode.
func TestFastJSONPath(t *testing.T) {
	fast := []string{
		`{"code":10,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"k":"v"}}`,
		`{"code":0,"extFields":{"a":"1"},"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`,
		`{"code":10,"extFields":{"properties":"UNIQ_KEY\u0001AB\u0002TAGS\u0001t\u0002","x":"q\"\\\/\b\f\n\r\t é"}}`,
		` {"code":-32768,"opaque":-2147483648,"flag":2147483647,"remark":null,"extFields":null} `,
		`{}`,
		`{"code":11,"extFields":{"queueId":1,"queueOffset":-12.5e+3,"commitOffset":true,"suspend":false,"subscription":null}}`,
		// Other clients' shapes: unknown keys with any value, keys in another case,
		// integer strings and booleans, a language ordinal, a numeric remark.
		`{"code":34,"unknownKey":[1,2,{"a":null,"b":"\ud800"}],"serializeTypeCurrentRPC":"JSON"}`,
		`{"CODE":34,"Opaque":"1,000","flag":true,"version":null}`,
		`{"code":"34","language":9,"remark":404}`,
	}
	for _, h := range fast {
		if _, ok := fastDecodeJSONHeader([]byte(h)); !ok {
			t.Errorf("fast path refused %s", h)
		}
		checkJSONDecodersAgree(t, []byte(h))
	}
	fallback := []string{
		`{"code":34,"code":35}`,
		`{"CODE":34,"code":35}`,
		`{"code":34,"extFields":{"k":{}}}`,
		`{"code":34,"remark":"\ud83d\ude00"}`,
		`{"code":1.5}`,
		`{"code":34,"deep":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	}
	for _, h := range fallback {
		if _, ok := fastDecodeJSONHeader([]byte(h)); ok {
			t.Errorf("fast path accepted %s; it should defer to the lenient decoder", h)
		}
		if _, err := DecodeHeader(SerializeJSON, []byte(h)); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	// A surrogate pair decodes (through the fallback) to the real rune.
	cmd, err := DecodeHeader(SerializeJSON, []byte(`{"remark":"\ud83d\ude00"}`))
	if err != nil || cmd.Remark != "\U0001F600" {
		t.Fatalf("remark %q err %v", cmd.Remark, err)
	}
}
