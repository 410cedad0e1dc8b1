package store

import (
	"net/netip"
	"testing"
)

// BenchmarkDecodeMessage measures DecodeMessage with the CRC check of a sample message
// (16-byte body, three properties): the read path of the broker's admin and
// transaction handlers.
func BenchmarkDecodeMessage(b *testing.B) {
	rec := sampleRecord(b)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMessage(rec, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOffsetMsgID measures formatting an IPv4 offset message id into a string, as
// the broker's send-back and transaction check-back do.
func BenchmarkOffsetMsgID(b *testing.B) {
	h := netip.MustParseAddrPort("10.0.0.1:10911")
	b.ReportAllocs()
	off := PhysicalOffset(1 << 30)
	for b.Loop() {
		msgIDSink = OffsetMsgID(h, off) // kept, so the string is really allocated
		off++
	}
	if len(msgIDSink) != 32 {
		b.Fatal(msgIDSink)
	}
}

var msgIDSink string

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

// BenchmarkRecordsCRC measures the entry log's CRC of one message record, which
// every node computes for each message it stores: it must not allocate.
func BenchmarkRecordsCRC(b *testing.B) {
	rec := sampleRecord(b)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	var crc uint32
	for b.Loop() {
		crc = recordsCRC(crc, rec)
	}
	crcSink = crc
}

var crcSink uint32

// sampleRecord is sampleMessage encoded as a stored record.
func sampleRecord(b *testing.B) []byte {
	m := sampleMessage()
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		b.Fatal(err)
	}
	return rec
}
