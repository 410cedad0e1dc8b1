package bench

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

func TestBatchBodyLayout(t *testing.T) {
	b := encodeBatchBody([][]byte{[]byte("ab"), []byte("cde")}, []string{store.EncodeProperties(map[string]string{store.PropertyKeys: "k1"}), ""})
	// element 1: 20-byte header + 2 body + 2 proplen + 8 props
	if total := binary.BigEndian.Uint32(b[0:]); total != 32 {
		t.Fatalf("first element TOTALSIZE %d, want 32", total)
	}
	if bodyLen := binary.BigEndian.Uint32(b[16:]); bodyLen != 2 || string(b[20:22]) != "ab" {
		t.Fatalf("first body %q", b[20:22])
	}
	if got := store.ParseProperties(string(b[24:32])); got["KEYS"] != "k1" {
		t.Fatalf("first properties %v", got)
	}
	if total := binary.BigEndian.Uint32(b[32:]); total != 25 || len(b) != 57 {
		t.Fatalf("second element TOTALSIZE %d, body length %d", total, len(b))
	}
}

// The rocketmq-go client takes only "TLS on": a config that would verify the
// server is refused rather than silently run unverified.
func TestGoClientTLSRefusesVerification(t *testing.T) {
	if on, err := goClientTLS(nil); on || err != nil {
		t.Fatalf("nil config: on=%v err=%v", on, err)
	}
	if on, err := goClientTLS(&tls.Config{InsecureSkipVerify: true}); !on || err != nil {
		t.Fatalf("trust-any config: on=%v err=%v", on, err)
	}
	if _, err := goClientTLS(&tls.Config{RootCAs: x509.NewCertPool()}); !errors.Is(err, ErrTLSVerifyUnsupported) {
		t.Fatalf("verifying config: err=%v, want ErrTLSVerifyUnsupported", err)
	}
}
