package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// indexCheckpointName holds the offset below which every index entry is durable.
const indexCheckpointName = "dispatch.checkpoint"

// indexService is the IndexFiles of the store (RocketMQ's IndexService): keys
// "topic#key" for every KEYS entry and the UNIQ_KEY of each message, queried by key
// and time range across files, newest first.
//
// Concurrency: one writer (the dispatcher); mu guards the file list; entries are
// published as described on indexFile.
type indexService struct {
	dir        string
	hashSlots  int
	maxEntries int
	log        hclog.Logger

	mu sync.RWMutex
	// Invariant: files are ordered by name (creation time), oldest first; only the last
	// one is written.
	files []*indexFile

	// dispatchedHint mirrors consumeQueues.dispatchedHint for the index checkpoint.
	dispatchedHint int64
	hintMu         sync.Mutex
}

// newIndexService maps every IndexFile under dir. The last one, unless full, is
// written next: its slot table is read into memory (indexFile.mem). slotsDurable
// says the store was closed cleanly, which wrote that table into the file; after a
// crash it is stale and recovery rebuilds it (recoverFiles).
func newIndexService(dir string, hashSlots, maxEntries int, slotsDurable bool, log hclog.Logger) (*indexService, error) {
	if hashSlots <= 0 || maxEntries <= 1 {
		return nil, fmt.Errorf("store: index hashSlots %d must be positive and maxEntries %d above 1", hashSlots, maxEntries)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mkdir index: %w", err)
	}
	s := &indexService{dir: dir, hashSlots: hashSlots, maxEntries: maxEntries, log: log}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read index dir: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if len(name) == 17 && !e.IsDir() && strings.Trim(name, "0123456789") == "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := openIndexFile(dir, name, hashSlots, maxEntries)
		if err != nil {
			s.close()
			return nil, err
		}
		s.files = append(s.files, f)
	}
	if n := len(s.files); n > 0 && !s.files[n-1].full() {
		// A stale table is not worth reading: recoverFiles builds it from the entries.
		if last := s.files[n-1]; !slotsDurable && !last.empty() {
			last.staleSlots = true
		} else {
			last.loadSlots()
		}
	}
	return s, nil
}

func (s *indexService) snapshot() []*indexFile {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.files
}

// lastEnd is the physical offset of the newest indexed message (-1 if none). Dispatch
// skips messages below it so that a re-dispatch does not index a message twice.
func (s *indexService) lastEnd() PhysicalOffset {
	files := s.snapshot()
	for i := len(files) - 1; i >= 0; i-- {
		if !files[i].empty() {
			return files[i].endPhy()
		}
	}
	return -1
}

// writable returns the file to add to, creating the next one (named by storeTS, or
// one millisecond after the previous name if that is not later) when needed.
func (s *indexService) writable(storeTS int64) (*indexFile, error) {
	files := s.snapshot()
	if n := len(files); n > 0 && !files[n-1].full() {
		return files[n-1], nil
	}
	name := indexFileName(storeTS)
	if n := len(files); n > 0 && name <= files[n-1].name {
		name = nextIndexName(files[n-1].name)
	}
	f, err := createIndexFile(s.dir, name, s.hashSlots, s.maxEntries)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.files = append(s.files, f)
	s.mu.Unlock()
	return f, nil
}

// nextIndexName is the name one millisecond after name (which sorts after it).
func nextIndexName(name string) string {
	b := []byte(name)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b) // unreachable for real times
}

// putKey indexes one key of the message at phy.
func (s *indexService) putKey(topic, key string, phy PhysicalOffset, storeTS int64) error {
	f, err := s.writable(storeTS)
	if err != nil {
		return err
	}
	f.put(indexKeyHash(topic, key), phy, storeTS)
	return nil
}

// query returns up to maxNum physical offsets of messages of topic with key stored in
// [begin, end] (ms), newest files first, as Java's IndexService.queryOffset.
func (s *indexService) query(topic, key string, maxNum int, begin, end int64) []PhysicalOffset {
	if maxNum <= 0 {
		return nil
	}
	hash := indexKeyHash(topic, key)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []PhysicalOffset
	for i := len(s.files) - 1; i >= 0 && len(out) < maxNum; i-- {
		f := s.files[i]
		if f.empty() {
			continue
		}
		if f.timeMatched(begin, end) {
			out = f.lookup(out, hash, maxNum, begin, end)
		}
		if f.beginTimestamp() < begin {
			break
		}
	}
	return out
}

// truncate cuts every entry that points at or beyond off: newer files go, the file
// holding off keeps its entries below it.
func (s *indexService) truncate(off PhysicalOffset, tsOf func(PhysicalOffset) (int64, bool)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.files) > 0 {
		f := s.files[len(s.files)-1]
		if !f.empty() && f.beginPhy() < off {
			keep := sort.Search(f.count()-1, func(i int) bool { return f.entryPhy(i+1) >= off }) + 1
			if keep < f.count() {
				f.cut(keep, tsOf)
			}
			return nil
		}
		if err := f.destroy(); err != nil {
			return err
		}
		s.files = s.files[:len(s.files)-1]
	}
	return nil
}

// recoverFiles drops torn or stale entries (beyond limit) of every file, so that the
// chains only hold entries for messages that exist. Files wholly beyond go.
func (s *indexService) recoverFiles(limit PhysicalOffset, tsOf func(PhysicalOffset) (int64, bool)) error {
	s.mu.Lock()
	files := s.files
	s.mu.Unlock()
	for _, f := range files {
		valid := f.validCount(limit)
		switch {
		case valid != f.count() || f.slotsDamaged(valid):
			s.log.Warn("index file cut on recovery", "file", f.name, "entries", f.count()-1, "kept", valid-1)
			f.cut(valid, tsOf)
		case f.staleSlots:
			start := time.Now()
			f.cut(valid, tsOf)
			s.log.Info("rebuilt the hash slots of the index file being written at the crash from its entries", "file", f.name, "entries", valid-1, "took", time.Since(start))
		}
	}
	return s.truncate(limit, tsOf)
}

// slotsDamaged reports a slot that names an entry at or beyond count.
func (f *indexFile) slotsDamaged(count int) bool {
	for i := range f.hashSlots {
		if v := f.slot(i); v < 0 || int(v) >= count {
			return true
		}
	}
	return false
}

// setHint records the dispatch progress for the checkpoint.
func (s *indexService) setHint(off PhysicalOffset) {
	s.hintMu.Lock()
	s.dispatchedHint = int64(off)
	s.hintMu.Unlock()
}

// flush syncs every file written since the last flush and then records the dispatch
// progress they cover. The file being written is synced without its slot table,
// which recovery rebuilds from the entries. A full file whose table is still on its
// way from memory (writeBack) holds the checkpoint at its last entry, so that
// recovery cuts it there and rebuilds its table too. final (close, dispatch stopped)
// first writes every table into its file.
func (s *indexService) flush(final bool) error {
	s.hintMu.Lock()
	hint := PhysicalOffset(s.dispatchedHint)
	s.hintMu.Unlock()
	files := s.snapshot()
	for _, f := range files {
		if final {
			if err := f.writeOutSlots(-1, true); err != nil {
				return err
			}
		}
		if err := f.flush(); err != nil {
			return err
		}
	}
	for _, f := range files {
		if f.full() && f.mem.Load() != nil {
			hint = min(hint, f.endPhy())
		}
	}
	return writeOffsetFile(filepath.Join(s.dir, indexCheckpointName), hint)
}

// writeBack starts the write-back of the entries added since the last call
// (indexFile.writeBackEntries) and copies the next slotsPerWriteOut slots of each
// full file's table into its mapping (indexFile.writeOutSlots); the flusher calls
// it when it does not flush the IndexFiles. Both are hints to the kernel: an error
// leaves the data in memory and is returned once every file had its turn.
func (s *indexService) writeBack() error {
	var errs []error
	for _, f := range s.snapshot() {
		if err := f.writeBackEntries(); err != nil {
			errs = append(errs, err)
		}
		if err := f.writeOutSlots(slotsPerWriteOut, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *indexService) checkpoint() (PhysicalOffset, bool) {
	return readOffsetFile(filepath.Join(s.dir, indexCheckpointName))
}

// close unmaps every file.
func (s *indexService) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.close()
	}
	s.files = nil
	return nil
}

// deleteBelow destroys IndexFiles (never the last) whose newest entry points below
// minPhys: every message they index is gone.
func (s *indexService) deleteBelow(minPhys PhysicalOffset) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.files[:max(0, len(s.files)-1)] {
		if f.endPhy() >= minPhys {
			break
		}
		if err := f.destroy(); err != nil {
			return err
		}
		n++
	}
	s.files = append(s.files[:0:0], s.files[n:]...)
	return nil
}
