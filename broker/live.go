package broker

import (
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// statsTick is how often the runtime stats sample their rates: once a second,
// as Apache's StoreStatsService does, so putTps's 10 s window has ten points.
const statsTick = time.Second

// SetMaxMessageSize changes maxMessageSize on this node while it runs: the
// next send is checked against n bytes (UPDATE_BROKER_CONFIG; cmd/rocketraft
// calls it for a live change of the key).
func (b *Broker) SetMaxMessageSize(n int) { b.capi.SetMaxMessageSize(n) }

// observeSent counts a stored message in the runtime stats, then in the
// metrics (clientapi's Sent hook).
func (b *Broker) observeSent(topic, props string, prepared bool, storedBytes int) {
	b.stats.ObservePut(b.replica.Now(), topic, 1, storedBytes)
	if m := b.cfg.Metrics; m != nil {
		m.ObserveSent(topic, props, prepared, storedBytes)
	}
}

// observePulled counts an answered pull in the runtime stats, then in the
// metrics (clientapi's Pulled hook).
func (b *Broker) observePulled(group, topic string, queueID int32, next store.QueueOffset, msgs, bytes int) {
	b.stats.ObserveGet(b.replica.Now(), group, topic, msgs, bytes)
	b.stats.ObservePullOffset(group, topic, queueID, int64(next))
	if m := b.cfg.Metrics; m != nil {
		m.ObservePulled(group, topic, queueID, next, msgs, bytes)
	}
}
