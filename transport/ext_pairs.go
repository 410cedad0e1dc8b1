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
	h := uint(len(k))*131 + uint(k[0])*31 + uint(k[len(k)-1])
	return 1 << (h & 63)
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
