package store

import "testing"

// BenchmarkDecodeMessage measures DecodeMessage with the CRC check of a sample message
// (16-byte body, three properties): the read path of the broker's admin and
// transaction handlers.
func BenchmarkDecodeMessage(b *testing.B) {
	m := sampleMessage()
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMessage(rec, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkViewRecord measures ViewRecord of the same sample message and reading the
// fields the append and the FSM take from it.
func BenchmarkViewRecord(b *testing.B) {
	m := sampleMessage()
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		v, err := ViewRecord(rec)
		if err != nil {
			b.Fatal(err)
		}
		n += len(v.Topic()) + int(v.QueueID())
	}
	if n == 0 {
		b.Fatal("no topic")
	}
}
