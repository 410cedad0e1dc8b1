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

// TestQuoteOrBackslashAgreesWithTheByteLoop: the eight-bytes-at-a-time search
// finds what a byte loop finds in printable buffers holding a quote, a
// backslash, both or neither at every position, from every start, including
// the neighbours of the two ('!', '#', '[', ']') that a wrong mask would take.
func TestQuoteOrBackslashAgreesWithTheByteLoop(t *testing.T) {
	naive := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			if b[i] == '"' || b[i] == '\\' {
				return i
			}
		}
		return len(b)
	}
	near := []byte("!#[]")
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 40 {
		for pos := range n + 1 {
			for _, marks := range [][]byte{nil, []byte(`"`), []byte(`\`), []byte(`\"`), []byte(`"\`)} {
				b := make([]byte, n)
				for i := range b {
					if c := byte(0x20 + r.IntN(0x5F)); c != '"' && c != '\\' {
						b[i] = c
					} else {
						b[i] = near[r.IntN(len(near))]
					}
				}
				for k, m := range marks {
					if pos+k*3 < n {
						b[pos+k*3] = m
					}
				}
				for start := range n + 1 {
					if got, want := quoteOrBackslash(b, start), naive(b, start); got != want {
						t.Fatalf("quoteOrBackslash(%q, %d) = %d, want %d", b, start, got, want)
					}
				}
			}
		}
	}
}
