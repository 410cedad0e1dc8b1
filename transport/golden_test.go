package transport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.frame golden files")

// goldenFrames pins the exact bytes this side writes. A change here is a wire change:
// check it against the Go client and Java before running with -update.
var goldenFrames = map[string]*Command{
	"request_send_message": {
		Code: int16(SendMessage), Language: "GO", Version: ProtocolVersion, Opaque: 1,
		ExtFields: map[string]string{"producerGroup": "PG", "topic": "TopicTest", "queueId": "2", "sysFlag": "0",
			"bornTimestamp": "1700000000000", "flag": "0", "properties": "UNIQ_KEY\x01ABC\x02TAGS\x01t\x02"},
		Body: []byte("Hello RocketMQ"),
	},
	"response_send_ok": {
		Code: int16(Success), Language: "GO", Version: ProtocolVersion, Opaque: 1, Flag: 1,
		ExtFields: map[string]string{"msgId": "7F00000100002A9F0000000000000000", "queueId": "2", "queueOffset": "0"},
	},
	"response_error_remark": {
		Code: int16(TopicNotExist), Language: "GO", Version: ProtocolVersion, Opaque: 99, Flag: 1,
		Remark: "topic[\"x\"] not exist,\napply first\tplease \u00e9",
	},
	"response_body_parts": {
		Code: int16(Success), Language: "GO", Version: ProtocolVersion, Opaque: 5, Flag: 1,
		ExtFields: map[string]string{"nextBeginOffset": "2"},
		Body:      []byte("A"), BodyParts: [][]byte{[]byte("BB"), []byte("CCC")},
	},
	"request_oneway_empty": {Code: int16(UpdateConsumerOffset), Opaque: 3, Flag: 2},
}

func TestGoldenFrames(t *testing.T) {
	for name, c := range goldenFrames {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := EncodeFrame(&buf, c); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".frame")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("encoded frame differs from %s:\n got  %q\n want %q", path, buf.Bytes(), want)
			}
			// And the golden bytes decode back to the command.
			got, err := DecodeFrame(bytes.NewReader(want), 0)
			if err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if got.Code != c.Code || got.Opaque != c.Opaque || got.Flag != c.Flag || got.Remark != c.Remark ||
				!bytes.Equal(got.Body, append(append([]byte(nil), c.Body...), bytes.Join(c.BodyParts, nil)...)) {
				t.Fatalf("golden decodes to %v", got)
			}
		})
	}
}

// TestGoldenGoClientFrame pins the Go client's request of §1.1 as a file too, so the
// fuzz seeds and other packages' tests can use real client bytes.
func TestGoldenGoClientFrame(t *testing.T) {
	path := filepath.Join("testdata", "goclient_send_request.frame")
	if *update {
		if err := os.WriteFile(path, goClientRequest(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(want, goClientRequest()) {
		t.Fatalf("%s differs from the hand-built frame", path)
	}
}
