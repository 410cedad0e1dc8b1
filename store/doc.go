// Package store is RocketMQ's storage engine, byte-compatible with the Java broker:
// the CommitLog on mmap'd segments, the stored-message codec, ConsumeQueues,
// IndexFiles, reput/dispatch, flush, recovery and retention.
//
// It imports no project package and never imports raft.
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
// Each message adds topic#UNIQ_KEY and topic#k for every space-separated KEYS entry.
// A query walks the chain of the key's slot in every file whose time span meets
// [begin, end], newest file first, keeping entries with the same hash and a time in
// range (hash matches: the caller re-checks the key).
//
// # Dispatch recovery
//
// consumequeue/dispatch.checkpoint and index/dispatch.checkpoint each hold one int64:
// a dispatched CommitLog offset taken before the ConsumeQueue (resp. IndexFile) files
// were synced, so every entry for a message below it is durable. Truncation lowers
// them at once. At Open, after the CommitLog is recovered to commitLogMax:
//
//  1. resume = max(CommitLog min, min(both checkpoints)) (CommitLog min when either is
//     missing), capped at commitLogMax; it is a record boundary.
//  2. Each ConsumeQueue is cut at its first empty or torn entry, or first entry whose
//     message does not end at or below commitLogMax.
//  3. IndexFile entries at or beyond resume (and torn ones) are cut and the hash slots
//     rebuilt from the kept entries.
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
package store
