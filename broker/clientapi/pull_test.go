package clientapi

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// pulledRecords encodes n stored records whose QUEUEOFFSET is 0, as the entry-log
// CommitLog leaves them on disk.
func pulledRecords(t testing.TB, n int) [][]byte {
	t.Helper()
	msgs := make([][]byte, n)
	for i := range msgs {
		rec, err := store.AppendMessage(nil, &store.Message{Topic: "T", QueueID: 1, Body: []byte(fmt.Sprintf("body-%d", i)),
			PhysicalOffset: store.PhysicalOffset(1000 * i), BornTimestamp: 1})
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = rec
	}
	return msgs
}

// TestPullResponseTakesQueueOffsetsFromTheConsumeQueue: the PULL body carries each
// message's queue offset from GetResult.QueueOffsets, not the 0 its record holds, and
// the rest of each record is sent from the record itself, not a copy.
func TestPullResponseTakesQueueOffsetsFromTheConsumeQueue(t *testing.T) {
	msgs := pulledRecords(t, 3)
	qos := []store.QueueOffset{7, 8, 1 << 40}
	total := 0
	for _, m := range msgs {
		total += len(m)
	}
	res := &store.GetResult{Status: store.Found, NextBeginOffset: 9, MaxOffset: 9, Messages: msgs, QueueOffsets: qos, TotalBytes: total}
	r := pullResponse(res, 7, true)
	if r.ResponseCode() != transport.Success || len(r.BodyParts) != 3*len(msgs) || r.BodyLen() != total {
		t.Fatalf("code %v, %d parts, body %d bytes; want SUCCESS, %d parts, %d bytes", r.ResponseCode(), len(r.BodyParts), r.BodyLen(), 3*len(msgs), total)
	}
	for i, m := range msgs {
		head, tail := r.BodyParts[3*i], r.BodyParts[3*i+2]
		if unsafe.SliceData(head) != unsafe.SliceData(m) || unsafe.SliceData(tail) != &m[len(m)-len(tail)] {
			t.Fatalf("message %d: head or tail is a copy", i)
		}
	}

	// Written the way a connection writes it (one vectored write), read back as a client.
	var frame bytes.Buffer
	if err := transport.EncodeFrame(&frame, r); err != nil {
		t.Fatal(err)
	}
	got, err := transport.DecodeFrame(&frame, frame.Len())
	if err != nil {
		t.Fatal(err)
	}
	body := got.Body
	for i := range msgs {
		size, _, err := store.RecordSize(body)
		if err != nil {
			t.Fatal(err)
		}
		m, err := store.DecodeMessage(body[:size], true)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if m.QueueOffset != qos[i] || string(m.Body) != fmt.Sprintf("body-%d", i) || m.PhysicalOffset != store.PhysicalOffset(1000*i) {
			t.Fatalf("message %d: queue offset %d body %q phys %d, want %d", i, m.QueueOffset, m.Body, m.PhysicalOffset, qos[i])
		}
		body = body[size:]
	}
	if len(body) != 0 {
		t.Fatalf("%d bytes after the last message", len(body))
	}
	for i, m := range msgs {
		if store.QueueOffsetOf(m) != 0 {
			t.Fatalf("record %d was patched in place", i)
		}
	}
}

var partsSink [][]byte

// TestPullBodyPartsAllocatesPerPullNotPerMessage: the parts slice and the queue
// offsets' buffer, whatever the batch size.
func TestPullBodyPartsAllocatesPerPullNotPerMessage(t *testing.T) {
	for _, n := range []int{1, 32, 1024} {
		msgs := pulledRecords(t, n)
		qos := make([]store.QueueOffset, n)
		if a := testing.AllocsPerRun(100, func() { partsSink = pullBodyParts(msgs, qos) }); a != 2 {
			t.Fatalf("%d messages: %v allocations per pull, want 2", n, a)
		}
	}
}
