package transport

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
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
func FuzzDecodeHeader(f *testing.F) {
	f.Add(byte(0), []byte(`{"code":10,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"k":"v"}}`))
	f.Add(byte(0), []byte(`{"code":0,"language":9,"remark":null}`))
	f.Add(byte(1), binaryHeader(34, 0, 479, 7, 0, "remark", [][2]string{{"k", "v"}, {"", ""}}))
	f.Add(byte(1), binaryHeader(-1, 200, -1, -1, -1, "", nil))
	f.Add(byte(1), make([]byte, 21))
	f.Add(byte(0), []byte(`{"code":0,"extFields":{"properties":"UNIQ_KEY\u0001A\u0002","a\"b":"\\\/\n"},"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`))
	f.Add(byte(0), []byte(` { "code" : -0 , "remark" : null , "extFields" : { } } `))
	f.Fuzz(func(t *testing.T, st byte, header []byte) {
		if SerializeType(st) == SerializeJSON {
			checkFastJSONAgreesWithStd(t, header)
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

// checkFastJSONAgreesWithStd: whenever the hand-written decoder accepts a header,
// encoding/json must accept it and produce the same command.
func checkFastJSONAgreesWithStd(t *testing.T, header []byte) {
	fast, ok := fastDecodeJSONHeader(header)
	if !ok {
		return
	}
	std, err := decodeJSONHeaderStd(header)
	if err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, header)
	}
	if fast.Code != std.Code || fast.Language != std.Language || fast.Version != std.Version ||
		fast.Opaque != std.Opaque || fast.Flag != std.Flag || fast.Remark != std.Remark ||
		(fast.ExtFields == nil) != (std.ExtFields == nil) || !maps.Equal(fast.ExtFields, std.ExtFields) {
		t.Fatalf("fast and std decoders differ on %q:\n fast %#v\n std  %#v", header, fast, std)
	}
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
		again.Flag != cmd.Flag || !bytes.Equal(again.Body, cmd.Body) || len(again.ExtFields) > len(cmd.ExtFields) {
		t.Fatalf("round trip changed the command:\n %v\n %v", cmd, again)
	}
	if !utf8.ValidString(cmd.Remark) {
		return // replaced by U+FFFD on encode
	}
	if again.Remark != cmd.Remark {
		t.Fatalf("remark %q became %q", cmd.Remark, again.Remark)
	}
	for k, v := range cmd.ExtFields {
		if utf8.ValidString(k) && utf8.ValidString(v) && again.ExtFields[k] != v {
			t.Fatalf("ext %q=%q became %q", k, v, again.ExtFields[k])
		}
	}
}
