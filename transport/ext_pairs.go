package transport

// keySet remembers which keys a decoder has seen, so that a repeated key is
// found without comparing each new key with every earlier one: a key sets one
// of 64 bits, and only a key whose bit is already set is looked for among the
// pairs. The keys real clients send (SEND_MESSAGE_V2's single letters, the
// other headers' names) rarely share a bit, so a header of n fields costs n
// bit tests instead of n²/2 string comparisons.
type keySet uint64

func keyBit(k string) keySet {
	if k == "" {
		return 1
	}
	// One-letter keys, as SEND_MESSAGE_V2 spells its fields (the Go and Java
	// clients' send header), each get their own bit: the low six bits of a
	// letter differ for all 52. Longer keys get a multiplicative hash of their
	// first and last bytes and length. The sum this replaces (len*131 +
	// first*31 + last) put every one-letter key on one of two bits, so 12 of
	// a V2 header's 14 pairs took the linear duplicate search.
	if len(k) == 1 {
		return 1 << (k[0] & 63)
	}
	h := (uint64(k[0]) | uint64(k[len(k)-1])<<8 | uint64(len(k))<<16) * 0x9E3779B97F4A7C15
	return 1 << (h >> 58)
}

// mayHave reports whether k may have been added; false is certain.
func (s keySet) mayHave(k string) bool { return s&keyBit(k) != 0 }

func (s *keySet) add(k string) { *s |= keyBit(k) }

// indexPair is the index of key in pairs, or -1.
func indexPair(pairs []ExtField, key string) int {
	for i := range pairs {
		if pairs[i].Key == key {
			return i
		}
	}
	return -1
}
