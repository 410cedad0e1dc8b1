// Package store is RocketMQ's storage engine, byte-compatible with the Java broker:
// the CommitLog on mmap'd segments, the stored-message codec, ConsumeQueues,
// IndexFiles, reput/dispatch, flush, recovery and retention.
//
// It imports no project package and never imports raft.
//
// # Usage
//
//	s, err := store.Open(store.Config{Dir: root})         // recovers CommitLog, CQ, index
//	res, err := s.AppendBatch(encodedRecs, leaderTimestamp) // from FSM.Apply: deterministic
//	r, err := s.GetMessages(topic, queueID, offset, 32, 1<<20, nil)
//	defer r.Release()
//	s.CleanExpired(now, ratio)                              // every 10 s from the broker
//	s.Close()                                               // flush, checkpoint, clean marker
//
// # Concurrency
//
// One writer at a time (AppendBatch, Truncate, ResetFrom, CleanExpired, Close, behind
// the Store's write lock; in a raft group the FSM is the only writer). Readers run
// concurrently: a segment's write position is published only after the bytes below it
// are copied and patched. Background goroutines: the reput (dispatch.go), the flusher
// (flush.go), the segment pre-allocator (allocator.go) and the warmer, which faults the
// CommitLog's pages in a small window ahead of the write position (warmer.go). Behind
// the write position, each flush can hand the page cache of everything older than a
// bound back to the kernel (cachetail.go, decision 0022; the broker sets the bound by
// role).
//
// # CommitLog
//
// commitlog/<20-digit start offset>: segments of CommitLogSegmentSize bytes (default
// 1 GiB; it shapes the bytes, so a raft group pins it), each named by the CommitLog
// offset of its first byte, contiguous. Records follow each other with no gaps; a
// record never spans two segments. Each message is the RocketMQ v1 stored layout
// (rocketmq-protocol.md §4.1; all big-endian):
//
//	offset  size     field
//	0       4        TOTALSIZE (whole record)
//	4       4        MAGIC 0xDAA320A7 (v1; v2 0xDAA320AB decoded, never written)
//	8       4        BODYCRC: CRC32-IEEE(body) & 0x7FFFFFFF
//	12      4        QUEUEID
//	16      4        FLAG
//	20      8        QUEUEOFFSET        patched at append (0 on disk with the entry log)
//	28      8        PHYSICALOFFSET     patched at append: the record's own offset
//	36      4        SYSFLAG
//	40      8        BORNTIMESTAMP
//	48      8|20     BORNHOST (IPv4 + port | IPv6 + port when SYSFLAG&0x10)
//	+0      8        STORETIMESTAMP     patched at append (the leader's timestamp)
//	+8      8|20     STOREHOST (IPv6 when SYSFLAG&0x20)  set in FSM Apply (the command's host)
//	+       4        RECONSUMETIMES
//	+       8        PREPARED TRANSACTION OFFSET
//	+       4+n      BODYLEN, BODY
//	+       1+t      TOPICLEN, TOPIC (TOPICLEN is 2 bytes in v2; t >= 1)
//	+       2+p      PROPLEN, PROPERTIES (name 0x01 value 0x02 ...)
//
// The layout is parsed in one place, record.go. ViewRecord checks one record's
// structure (TOTALSIZE equal to the bytes given and >= 91, a message MAGIC, every
// length inside the record, the fields adding up to TOTALSIZE, a topic) and returns a
// RecordView, an allocation-free view that the append, the recovery scan, the reput,
// DecodeMessage and the FSM read fields through; no other package declares a position.
// Writers: AppendMessage encodes, PatchOffsets and PatchStoreTimestamp patch in the
// CommitLog's copy at append, RecordView.AppendWithStoreHost copies a record with
// another STOREHOST, and AppendOffsetMsgID formats the offset message id.
//
// Blank (end-of-segment) record: when the next message does not fit in what is left
// of the segment with MinBlankRecord (8) bytes to spare, the rest of the segment
// becomes one blank record and the message starts the next segment:
//
//	offset  size  field
//	0       4     TOTALSIZE = bytes left in the segment (>= 8)
//	4       4     MAGIC 0xCBD43194
//	8       n-8   zero
//
// So every message leaves 0 or >= 8 bytes after it, and a message larger than
// segment size - 8 is MESSAGE_ILLEGAL. Space after the last record is all zero: new
// segments are created zeroed (written as <name>.tmp, synced, renamed) and every cut
// zeroes and msyncs what it removes.
//
// # checkpoint and abort files
//
// checkpoint (52 bytes, replaced atomically: temp file, fsync, rename, fsync dir):
//
//	offset  size  field
//	0       4     magic 0x52524350 ("RRCP")
//	4       4     version (1)
//	8       8     commitLogFlushed: every CommitLog byte below it was msync'd first
//	16      8     commitLogMin when written (informational)
//	24      8     logicsFlushed: dispatched offset when CQ/index were flushed (informational)
//	32      8     physicMsgTimestamp: STORETIMESTAMP of the last append (informational)
//	40      8     indexMsgTimestamp (informational)
//	48      4     CRC32-IEEE of bytes 0-47
//
// abort: an empty file created (and the directory synced) at the start of Open and
// removed as the last step of a successful Close. Present at Open = the previous run
// did not shut down cleanly.
//
// # Recovery
//
// Claim: after Open the CommitLog is the longest prefix of valid records on disk, it
// contains every byte that was below commitLogFlushed when the checkpoint was written,
// and nothing stale lies after it.
//
//  1. Appends publish a segment's write position only after the bytes below it are
//     complete, and flushes msync in order before the checkpoint is written; so
//     commitLogFlushed is a record boundary and every record below it is on disk.
//  2. Open scans with scanRecords: a record is accepted only if its structure adds up,
//     BODYCRC matches, PHYSICALOFFSET equals its own offset (stale bytes of an earlier
//     cut record fail this) and it leaves 0 or >= 8 bytes; a blank record ends the
//     segment; zero TOTALSIZE ends the data. Clean shutdown: the scan starts at
//     commitLogFlushed (the checkpoint is trusted, the tail still verified). Dirty: at
//     the start of the segment holding commitLogFlushed, so that segment's committed
//     records are re-verified. No checkpoint: the start of the last three segments.
//  3. If the scan stops below commitLogFlushed, acknowledged data is damaged: Open fails
//     with ErrCorrupt naming the offset and segment, and changes nothing (design.md §5:
//     never silently truncate the committed region).
//  4. Otherwise everything from the stop is cut: the segment's tail is zeroed and
//     msync'd, later segments (including an unadopted pre-allocated one) are deleted.
//     Because cuts zero what they remove, a later crash cannot resurrect cut records,
//     and torn writes (zeros or partial records) and garbage stop the next scan at the
//     same boundary.
//  5. Truncate writes a checkpoint with commitLogFlushed lowered to the cut point
//     before cutting, so (3) never fires for a deliberate truncation.
//
// Then the dispatcher recovers the ConsumeQueues and IndexFiles against the recovered
// end (Dispatch recovery, below) and the queue offset table is rebuilt from them.
//
// # Retention
//
// CleanExpired deletes whole CommitLog segments from the front. A segment's age is
// the largest STORETIMESTAMP of its messages, not the file mtime: it is the same on
// every replica and survives snapshot installs. Rules in decideRetention. Finding it
// walks the segment's records (a read of the whole segment after a start), so a run
// reads only the segments decideRetention looks at (none outside the deleteWhen hours
// unless the disk is over its ratio; at the hour, the oldest up to the first it keeps),
// and reads them without the write locks (loadSegmentTimes).
//
// # ConsumeQueue
//
// consumequeue/<topic>/<queueId>/<20-digit start>: one file per 300,000 entries
// (ConsumeQueueEntriesPerFile), named by the BYTE offset of its first entry within the
// queue (entry index × 20), as RocketMQ names them. Entry n of the queue is queue
// offset n. All integers big-endian.
//
//	offset  size  field
//	0       8     physical offset of the message in the CommitLog (int64)
//	8       4     stored size of the message (int32)
//	12      8     tags code: Java String.hashCode of TAGS (int64; 0 without a tag)
//
// A queue rebuilt from a CommitLog whose head was deleted starts at a non-zero queue
// offset; the entries before it in its first file are pre-blank fillers (physical
// offset 0, size 0x7FFFFFFF, tags 0) as Java writes, so the file stays contiguous.
// The min queue offset is the first entry whose message is still stored; the last
// file is never deleted so the max offset survives retention.
//
// A queue's next file is made ahead, off the dispatch path, as a sparse spare
// (cqspare.go, decision 0021): the first file of each queue of a topic when the
// FSM applies the topic's creation (Store.PrepareQueues), and the file after the
// last once that is three quarters written. The dispatcher takes the spare,
// reserving its blocks with fallocate, or creates the file itself when there is
// none. A spare left by a crash is an all-zero file past the queue's end, which
// step 2 of the recovery below removes.
//
// # IndexFile
//
// index/<yyyyMMddHHmmssSSS>: named by the store time (UTC) of the first message it
// indexes, so replicas name files alike (one millisecond is added when a file fills
// within the same millisecond). Size 40 + hashSlots×4 + maxEntries×20 bytes
// (defaults 5,000,000 and 20,000,000). Big-endian.
//
//	header (40 bytes)
//	offset  size  field
//	0       8     beginTimestamp: store time of the first entry (ms)
//	8       8     endTimestamp: store time of the last entry (ms)
//	16      8     beginPhyOffset
//	24      8     endPhyOffset: physical offset of the last indexed message
//	32      4     hashSlotCount
//	36      4     indexCount: next entry number; starts at 1 (entry 0 is unused, 0 = none)
//
//	slots (hashSlotCount × 4 bytes)
//	slot[keyHash % hashSlotCount] = number of the newest entry in that slot (0 = empty)
//
//	entries (maxEntries × 20 bytes), entry i at 40 + hashSlotCount×4 + i×20
//	offset  size  field
//	0       4     keyHash: Java "topic#key".hashCode(), Math.abs, 0 for MIN_VALUE
//	4       8     phyOffset of the message
//	12      4     timeDiff: (storeTimestamp - beginTimestamp) / 1000, in seconds
//	16      4     prevIndex: older entry of the same slot (0 ends the chain)
//
// The slot table of the file being written is kept in memory, not in the mapping: its
// slot region on disk is stale until the file is full, when the flusher copies the
// table in 1 MiB per round, or the store closes (decision 0018). After a crash the
// table is rebuilt from the entries.
//
// Each message adds topic#UNIQ_KEY and topic#k for every space-separated KEYS entry.
// A query walks the chain of the key's slot in every file whose time span meets
// [begin, end], newest file first, keeping entries with the same hash and a time in
// range (hash matches: the caller re-checks the key).
//
// # Dispatch recovery
//
// consumequeue/dispatch.checkpoint and index/dispatch.checkpoint each hold one int64:
// a dispatched CommitLog offset taken before the ConsumeQueue (resp. IndexFile) files
// were synced, so every entry for a message below it is durable. Every flush syncs
// the ConsumeQueues; the IndexFiles only every IndexFlushInterval (default a minute)
// and at close, since they are derived from the CommitLog alone and are rebuilt above
// their checkpoint instead (decision 0017). Truncation lowers both at once. At Open,
// after the CommitLog is recovered to commitLogMax:
//
//  1. resume = the ConsumeQueue checkpoint and idxFrom = the IndexFile checkpoint, each
//     at least the CommitLog min (the min when missing) and capped at commitLogMax;
//     both are record boundaries.
//  2. Each ConsumeQueue is cut at its first empty or torn entry, or first entry whose
//     message does not end at or below commitLogMax.
//  3. IndexFile entries at or beyond idxFrom (and torn ones) are cut and the hash slots
//     rebuilt from the kept entries, as are the slots of the last file after a crash
//     (they were in memory); then the records from idxFrom to resume are indexed
//     again, without touching a ConsumeQueue (reindex). The index checkpoint is never
//     above the last entry of a full file whose slot table is not yet in it.
//  4. Records from resume to commitLogMax are re-dispatched in verify mode: an existing
//     ConsumeQueue entry must equal what the record gives (a differing one is cut and
//     rewritten), a missing one is appended, index entries are added for messages
//     beyond the last indexed one. Entries below resume are durable; entries lost above
//     it within a queue are cut in step 2 and rewritten here, so no queue has a gap. A
//     gap anyway (files removed by hand) re-verifies from the CommitLog start.
//  5. Min queue offsets move to the first message still stored.
//
// Afterwards every ConsumeQueue and IndexFile holds exactly the messages below
// commitLogMax, as a fresh dispatch of the CommitLog would.
//
// # Entry log (decision 0016, the single write)
//
// EntryLog (entrylog.go) keeps a raft log in CommitLog form: each entry is an entry
// record (topic RMQ_SYS_RAFT_ENTRY, body "RFTE", version, index, term, type, record
// count, the records' CRC-32C, data) followed by its message records, with PHYSICALOFFSET patched,
// QUEUEOFFSET 0 and the entry's STORETIMESTAMP, so replicas fed the same entries hold
// the same bytes. Open scans from the floor's entry record (commitlog/first-index
// holds the floor and that position, decision 0019), cuts a torn last entry and
// refuses bad bytes before the last two written segments (ErrCorrupt).
//
// # Scrub
//
// A start checks only the tail: the CommitLog's last segments (recoverCommitLog) and,
// with the entry log, the raft entries from the floor up. The scrub (scrub.go) checks
// every older record in the background at Config.ScrubRate, once per open, with the
// recovery scan's rules, and reports a bad one on Store.Corrupt; the broker process
// then stops (decision 0019).
//
// With Config.RaftEntryLog (raftLogStore=commitlog) the EntryLog is the Store's own
// CommitLog (entrymode.go): raft writes every message once, with pwrite and
// fdatasync, and Apply copies nothing. ApplyEntry assigns queue offsets to the kept
// records of a committed entry and names the refused ones dead (deadrecords.go); the
// reput then dispatches up to the entry's end, giving each record its queue's next
// offset and passing over entry records and dead records, the same offsets Apply
// handed out. The ConsumeQueue is the authority on queue offsets: readers patch
// QUEUEOFFSET (the pull body, ReadMessageAt; queuelookup.go). Open dispatches nothing
// (recoverCut): the tail is raft's, so the FSM rewinds dispatch to its checkpoint
// (RewindDispatch) and raft's replay applies the rest again. A snapshot carries the
// queues' next offsets and the dead records (EntrySnapshotState, ResetFromEntries).
// The flusher leaves the CommitLog to raft's syncs and the warmer is off (its dirty
// zero pages would go out with every fdatasync).
package store
