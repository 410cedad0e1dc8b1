package transport

import (
	"math/rand/v2"
	"testing"
)

// TestPrintableASCIIAgreesWithTheByteLoop: the eight-bytes-at-a-time check
// gives the byte loop's answer on random buffers seeded with every boundary
// byte (0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xFF) at every position and length.
func TestPrintableASCIIAgreesWithTheByteLoop(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c > 0x7E {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for pos := range n + 1 {
			for _, bad := range []byte{0x00, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xFF} {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(0x20 + r.IntN(0x5F))
				}
				if pos < n {
					b[pos] = bad
				}
				if got, want := printableASCII(b), naive(b); got != want {
					t.Fatalf("printableASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
