package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func addFrameSeeds(f *testing.F) {
	f.Add(goClientRequest())
	f.Add(rawFrame(SerializeRocketMQ, binaryHeader(34, 0, 479, 7, 0, "r", [][2]string{{"k", "v"}}), []byte("b")))
	f.Add(rawFrame(SerializeJSON, []byte(`{"code":0,"flag":1,"extFields":null}`), nil))
	f.Add([]byte{0, 0, 0, 4, 1, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	files, _ := filepath.Glob(filepath.Join("testdata", "*.frame"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzDecodeFrame: any bytes either fail with an error or decode to a command that
// survives an encode/decode round trip.
func FuzzDecodeFrame(f *testing.F) {
	addFrameSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd, err := DecodeFrame(bytes.NewReader(data), 1<<16)
		if err != nil {
			if cmd != nil {
				t.Fatal("command returned with an error")
			}
			if !errors.Is(err, ErrMalformedFrame) && !errors.Is(err, ErrFrameTooLarge) &&
				!errors.Is(err, io.ErrUnexpectedEOF) && err != io.EOF {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		checkReencode(t, cmd)
	})
}

// FuzzDecodeHeader feeds header bytes of either serialize type straight to the decoders.
// For JSON it also holds the three JSON decoders to each other: the lenient one (the
// authority) never panics and fails only with a clear ErrMalformedFrame; whatever the
// fast path or the all-strings reference decoder accepts, it accepts with the same
// result.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(byte(0), []byte(`{"code":10,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"k":"v"}}`))
	f.Add(byte(0), []byte(`{"code":0,"language":9,"remark":null}`))
	f.Add(byte(1), binaryHeader(34, 0, 479, 7, 0, "remark", [][2]string{{"k", "v"}, {"", ""}}))
	f.Add(byte(1), binaryHeader(-1, 200, -1, -1, -1, "", nil))
	f.Add(byte(1), make([]byte, 21))
	f.Add(byte(0), []byte(`{"code":0,"extFields":{"properties":"UNIQ_KEY\u0001A\u0002","a\"b":"\\\/\n"},"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`))
	f.Add(byte(0), []byte(` { "code" : -0 , "remark" : null , "extFields" : { } } `))
	f.Add(byte(0), []byte(`{"code":11,"extFields":{"queueId":1,"queueOffset":12345678901234567890,"maxMsgNums":32.0,"sysFlag":-1e2,"commitOffset":true,"subscription":null,"x":{"a":[1,"b"]}}}`))
	f.Add(byte(0), []byte(`{"CODE":"310","Opaque":"1,000","flag":2.9,"version":"401.00","language":"java","remark":12,"EXTFIELDS":{"a":"1"},"extFields":{"b":false}}`))
	f.Add(byte(0), []byte(`{"code":1e999999999,"opaque":-0.0000001e3,"version":"NULL","flag":"","language":null}`))
	f.Add(byte(0), []byte(`null`))
	f.Fuzz(func(t *testing.T, st byte, header []byte) {
		switch SerializeType(st) {
		case SerializeJSON:
			checkJSONDecodersAgree(t, header)
		case SerializeRocketMQ:
			checkBinaryExtAgrees(t, header)
		}
		cmd, err := DecodeHeader(SerializeType(st), header)
		if err != nil {
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error does not wrap ErrMalformedFrame: %v", err)
			}
			return
		}
		checkReencode(t, cmd)
	})
}

// checkJSONDecodersAgree: whenever the fast path or the strict reference decoder
// accepts a header, the lenient decoder accepts it too and produces the same command;
// the lenient decoder's errors wrap ErrMalformedFrame and say what failed.
func checkJSONDecodersAgree(t *testing.T, header []byte) {
	t.Helper()
	lenient, lerr := decodeJSONHeaderLenient(header)
	if lerr == nil && !json.Valid(header) {
		t.Fatalf("lenient decoder accepted invalid JSON %q", header)
	}
	if lerr != nil {
		if lenient != nil {
			t.Fatalf("lenient decoder returned a command with its error %v", lerr)
		}
		if !errors.Is(lerr, ErrMalformedFrame) || !strings.HasPrefix(lerr.Error(), "decode JSON header (") {
			t.Fatalf("lenient error is not a clear ErrMalformedFrame: %v", lerr)
		}
	}
	for name, decode := range map[string]func([]byte) (*Command, bool){
		"fast": fastDecodeJSONHeader,
		"strict": func(b []byte) (*Command, bool) {
			c, err := decodeJSONHeaderStrict(b)
			return c, err == nil
		},
	} {
		other, ok := decode(header)
		if !ok {
			continue
		}
		if !json.Valid(header) {
			t.Fatalf("%s decoder accepted invalid JSON %q", name, header)
		}
		if lerr != nil {
			t.Fatalf("%s decoder accepted what the lenient one rejects (%v): %q", name, lerr, header)
		}
		if !sameHeader(other, lenient) {
			t.Fatalf("%s and lenient decoders differ on %q:\n %s %#v\n lenient %#v", name, header, name, other, lenient)
		}
	}
}

func sameHeader(a, b *Command) bool {
	return a.Code == b.Code && a.Language == b.Language && a.Version == b.Version &&
		a.Opaque == b.Opaque && a.Flag == b.Flag && a.Remark == b.Remark &&
		(a.Fields() == nil) == (b.Fields() == nil) && maps.Equal(a.Fields(), b.Fields())
}

func checkReencode(t *testing.T, cmd *Command) {
	frame, err := AppendFrame(nil, cmd)
	if err != nil {
		t.Fatalf("re-encode %v: %v", cmd, err)
	}
	again, err := DecodeFrame(bytes.NewReader(frame), len(frame))
	if err != nil {
		t.Fatalf("decode of re-encoded %v: %v", cmd, err)
	}
	if again.Code != cmd.Code || again.Version != cmd.Version || again.Opaque != cmd.Opaque ||
		again.Flag != cmd.Flag || !bytes.Equal(again.Body, cmd.Body) || len(again.Fields()) > len(cmd.Fields()) {
		t.Fatalf("round trip changed the command:\n %v\n %v", cmd, again)
	}
	if !utf8.ValidString(cmd.Remark) {
		return // replaced by U+FFFD on encode
	}
	if again.Remark != cmd.Remark {
		t.Fatalf("remark %q became %q", cmd.Remark, again.Remark)
	}
	for k, v := range cmd.Fields() {
		if utf8.ValidString(k) && utf8.ValidString(v) && again.Field(k) != v {
			t.Fatalf("ext %q=%q became %q", k, v, again.Field(k))
		}
	}
}
