package store

import (
	"fmt"
	"sync"
)

// A ConsumeQueue file is created with two fsyncs (the file, then its directory,
// so that a crash never leaves a half-made file under a real name). Made by the
// dispatcher when it needs the file, that stalls every queue behind it: a new
// topic's first messages waited for one creation per queue in a row, and a busy
// queue waits at each roll-over (0.4 ms typically, 2 ms at p99 on this project's
// build machine with raft's fdatasyncs beside it; BenchmarkConsumeQueueRollOver).
// So the next file of a queue is made ahead, off the dispatch path, as a spare:
//   - when a topic is created (Store.PrepareQueues), the first file of each of
//     its queues that has none;
//   - when a queue's last file is three quarters written, the file after it.
//
// A spare is sparse (it holds no disk blocks, so topics created and never
// written cost nothing); the dispatcher reserves its blocks with fallocate when
// it takes it, so that writing through the mapping still cannot meet a full
// disk. A spare is not one of the queue's files until taken: readers,
// truncation and retention never see it. Left on disk by a crash, it is an
// all-zero file after the queue's end, which recovery's recoverEnd removes.

// spareRequest asks for the file of q starting at start (0 for a queue with no
// files, topic and queueID naming the queue when q is nil: PrepareQueues).
type spareRequest struct {
	q       *consumeQueue
	topic   string
	queueID int32
	start   int64
}

// spareQueueLen bounds the requests waiting for the background goroutine; a
// request that finds it full is dropped (the dispatcher then creates the file
// itself, as it always could).
const spareQueueLen = 1024

// spares is the background goroutine that creates spares, started on first use.
type spares struct {
	reqs chan spareRequest
	quit chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex // guards reqs, quit and closed
	// closed is set by stop; asks after it are dropped.
	closed bool
	// off makes no spares (BenchmarkConsumeQueueRollOver's baseline).
	off bool
}

// askSpare queues r unless the queues are closed or the queue is full.
func (c *consumeQueues) askSpare(r spareRequest) {
	s := &c.spares
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.off {
		return
	}
	if s.reqs == nil {
		s.reqs = make(chan spareRequest, spareQueueLen)
		s.quit = make(chan struct{})
		s.wg.Add(1)
		go c.spareLoop()
	}
	select {
	case s.reqs <- r:
	default:
	}
}

func (c *consumeQueues) spareLoop() {
	s := &c.spares
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case r := <-s.reqs:
			q := r.q
			if q == nil {
				var err error
				if q, err = c.getOrCreate(r.topic, r.queueID); err != nil {
					c.log.Warn("preparing consumequeue", "topic", r.topic, "queue", r.queueID, "error", err)
					continue
				}
			}
			if err := q.makeSpare(r.start); err != nil {
				c.log.Warn("creating consumequeue file ahead failed; the dispatcher will create it", "topic", q.topic, "queue", q.queueID, "file", fileName(r.start), "error", err)
			}
		}
	}
}

// stopSpares stops the background goroutine, waiting for a creation in flight.
func (c *consumeQueues) stopSpares() {
	s := &c.spares
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	started := s.quit != nil
	s.mu.Unlock()
	if started {
		close(s.quit)
		s.wg.Wait()
	}
}

// prepare asks for the first file of queues 0 … n-1 of topic, for those that
// have none yet (the goroutine checks again when it gets there).
func (c *consumeQueues) prepare(topic string, n int32) {
	for id := range n {
		if q := c.get(topic, id); q != nil && q.files.last() != nil {
			continue
		}
		c.askSpare(spareRequest{topic: topic, queueID: id})
	}
}

// makeSpare creates the queue's spare at start unless it has one, or start is
// no longer the end of its last file (0 for a queue with no files).
func (q *consumeQueue) makeSpare(start int64) error {
	q.createMu.Lock()
	defer q.createMu.Unlock()
	if q.spare != nil || q.closed {
		return nil
	}
	end := int64(0)
	if last := q.files.last(); last != nil {
		end = last.end()
	}
	if start != end {
		return nil
	}
	mf, err := createMappedFile(q.files.dir, start, q.files.fileSize, fillSparse)
	if err != nil {
		return err
	}
	q.spare = mf
	return nil
}

// nextFile appends the file starting at start to the queue and returns it: the
// spare when it is that file, one created now otherwise.
func (q *consumeQueue) nextFile(start int64) (*mappedFile, error) {
	q.createMu.Lock()
	defer q.createMu.Unlock()
	if s := q.spare; s != nil {
		q.spare = nil
		if s.start == start {
			// Reserve the blocks first: a full disk fails here, cleanly, as the
			// synchronous creation below would.
			err := allocate(s.file, s.size)
			if err == nil {
				if err = q.files.adopt(s); err == nil {
					return s, nil
				}
			}
			q.owner.log.Debug("spare consumequeue file not taken", "file", fileName(start), "error", err)
		}
		if err := s.destroy(); err != nil {
			return nil, fmt.Errorf("remove spare %s: %w", fileName(s.start), err)
		}
	}
	return q.files.createFile(start)
}

// dropSpare removes the spare, if any, and makes the queue refuse new ones.
func (q *consumeQueue) dropSpare() {
	q.createMu.Lock()
	defer q.createMu.Unlock()
	q.closed = true
	if q.spare != nil {
		_ = q.spare.destroy()
		q.spare = nil
	}
}
