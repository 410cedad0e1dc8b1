package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestDiskProbeMeasuresEachAppendAndRemovesItsFile(t *testing.T) {
	dir := t.TempDir()
	var text, js bytes.Buffer
	r, err := Disk(context.Background(), DiskOptions{Dir: dir, Size: 4096, Count: 50, Out: &text, JSON: &js})
	if err != nil {
		t.Fatal(err)
	}
	if r.Appends != 50 || r.Bytes != 50*4096 || r.Append.Count != 50 || r.Sync.Count != 50 {
		t.Fatalf("result %+v: want 50 appends of 4096 bytes, 50 samples in each series", r)
	}
	// Each append sample is its pwrite plus its fdatasync, so every order
	// statistic of the appends is at least the same one of the syncs.
	if r.Append.P50 < r.Sync.P50 || r.Append.Max < r.Sync.Max || r.Sync.P50 <= 0 {
		t.Errorf("append %+v, fdatasync %+v: an append includes its fdatasync", r.Append, r.Sync)
	}
	if !strings.Contains(text.String(), "disk: 50 appends of 4096 bytes") {
		t.Errorf("summary text %q", text.String())
	}
	var line DiskJSON
	if err := json.Unmarshal(js.Bytes(), &line); err != nil {
		t.Fatalf("JSON line %q: %v", js.String(), err)
	}
	if line.Type != "disk" || line.Appends != 50 || line.Size != 4096 || line.Sync.Count != 50 || line.Append.P50Ms <= 0 {
		t.Errorf("JSON line %+v", line)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the probe left %d files in %s", len(left), dir)
	}
}

func TestDiskProbeSharesItsCountAmongParallelAppenders(t *testing.T) {
	dir := t.TempDir()
	var js bytes.Buffer
	r, err := Disk(context.Background(), DiskOptions{Dir: dir, Size: 4096, Count: 31, Parallel: 3, JSON: &js})
	if err != nil {
		t.Fatal(err)
	}
	if r.Appends != 31 || r.Append.Count != 31 || r.Sync.Count != 31 {
		t.Errorf("result %+v: want 31 appends over the 3 appenders, each sampled", r)
	}
	var line DiskJSON
	if err := json.Unmarshal(js.Bytes(), &line); err != nil || line.Parallel != 3 {
		t.Errorf("JSON line %q (%v): want parallel 3", js.String(), err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the appenders left %d files", len(left))
	}
}

func TestDiskProbeRollsToAFreshFileWhenOneIsFull(t *testing.T) {
	dir := t.TempDir()
	seg := &diskSegmentFile{dir: dir, size: 3 * 4096}
	defer seg.close()
	var names []string
	for i := range 7 {
		f, off, err := seg.next(4096)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(i%3) * 4096; off != want {
			t.Errorf("append %d at %d, want %d", i, off, want)
		}
		names = append(names, f.Name())
		if left, _ := os.ReadDir(dir); len(left) != 1 {
			t.Errorf("append %d: %d files in the dir, want only the current one", i, len(left))
		}
	}
	if names[0] != names[2] || names[2] == names[3] || names[3] != names[5] || names[5] == names[6] {
		t.Errorf("files per append %v: want a new file every 3 appends", names)
	}
	seg.close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("close left %d files", len(left))
	}
}

func TestDiskProbeRunsForItsDuration(t *testing.T) {
	r, err := Disk(context.Background(), DiskOptions{Dir: t.TempDir(), Size: 512, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Appends == 0 || r.Elapsed < 200*time.Millisecond {
		t.Errorf("%d appends in %s: want some, in at least the 200ms asked for", r.Appends, r.Elapsed)
	}
}

func TestDiskProbeRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		o    DiskOptions
		want string
	}{
		{DiskOptions{Size: 4096, Count: 1}, "--dir is empty"},
		{DiskOptions{Dir: ".", Size: 100, Count: 1}, "--size 100: must be 512 to 16777216 bytes"},
		{DiskOptions{Dir: ".", Size: 32 << 20, Count: 1}, "--size 33554432"},
		{DiskOptions{Dir: ".", Size: 4096, Count: -1}, "--count -1"},
		{DiskOptions{Dir: ".", Size: 4096, Count: 1, Parallel: 65}, "--parallel 65: must be 1 to 64"},
		{DiskOptions{Dir: ".", Size: 4096}, "--duration 0s: must be positive when --count is 0"},
		{DiskOptions{Dir: "/no/such/dir", Size: 4096, Count: 1}, "/no/such/dir"},
	} {
		_, err := Disk(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.o, err, c.want)
		}
	}
}
