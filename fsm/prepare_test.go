package fsm

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTopicUpsertPreparesQueueFiles: applying a topic's creation makes the first
// ConsumeQueue file of each of its write queues ahead of any message (the store
// does it in the background); a rejected upsert makes none.
func TestTopicUpsertPreparesQueueFiles(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	f := newRealFSM(t, st, dir)
	// The rejected upsert goes first: the store makes files in the order asked,
	// so once Fresh's exist, any of Rejected's would too.
	bad := f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "Rejected", ReadQueueNums: -1, WriteQueueNums: 2, Perm: 6}})))
	if r, ok := bad.(*ConfigResult); !ok || r.Err == nil {
		t.Fatalf("readQueueNums -1 was accepted: %+v", bad)
	}
	res := f.Apply(cmdLog(2, enc(t, TopicUpsert{Topic: TopicConfig{Name: "Fresh", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}})))
	if r, ok := res.(*ConfigResult); !ok || r.Err != nil {
		t.Fatalf("upsert: %+v", res)
	}
	first := func(topic string, id int) string {
		return filepath.Join(dir, "consumequeue", topic, string(rune('0'+id)), "00000000000000000000")
	}
	deadline := time.Now().Add(10 * time.Second)
	for id := range 3 {
		for {
			if _, err := os.Stat(first("Fresh", id)); err == nil {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("queue %d's first file not made: %v", id, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "consumequeue", "Rejected")); !os.IsNotExist(err) {
		t.Fatalf("a rejected topic got queue files: %v", err)
	}
}
