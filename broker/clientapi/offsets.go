package clientapi

import (
	"context"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// queryFlushTimeout bounds the replication of a pending offset before a
// QUERY_CONSUMER_OFFSET answer: one raft round trip, or until a leader that
// lost its quorum notices (its lease, 500 ms by default); under the Go
// client's 3 s request timeout.
const queryFlushTimeout = 2 * time.Second

// handleQueryOffset serves QUERY_CONSUMER_OFFSET (14) with RocketMQ's rule that
// a group with no stored offset starts at 0 while the queue still holds message
// 0, so "produce first, then start a consumer" delivers the earlier messages.
// It answers replicated offsets only (offsets.Buffer.Durable), so an answer
// never goes back after a failover, and only on the ready leader: a follower,
// or a node still replaying its log after a restart, relays it (route.Leader),
// since its own applied offsets lag (chaos K3 and N3).
func (a *API) handleQueryOffset(ctx context.Context, req *route.Request) (*transport.Command, error) {
	e := route.FieldsOf(req.Command)
	group, topic, queueID := e.Str("consumerGroup", true), e.Str("topic", true), e.Int32("queueId", true, 0)
	if e.Err != nil {
		return nil, e.Err
	}
	fctx, cancel := context.WithTimeout(ctx, queryFlushTimeout)
	defer cancel()
	if off, ok := a.d.Offsets.Durable(fctx, group, topic, queueID); ok {
		return route.OK(map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, nil), nil
	}
	if req.Field("setZeroIfNotFound") != "false" && a.d.Store.MinQueueOffset(topic, queueID) <= 0 {
		return route.OK(map[string]string{"offset": "0"}, nil), nil
	}
	return transport.NewResponse(transport.QueryNotFound, "no offset stored for "+group), nil
}

// handleUpdateOffset serves UPDATE_CONSUMER_OFFSET (15) on the leader, which
// buffers it (broker/offsets); followers relay it (route.LeaderOneway).
//
// While the group may have consumers online here (clients.MayHaveConsumers), a
// commit is their progress and never lowers the committed offset
// (offsets.Buffer.Advance): in a rebalance the new owner of a queue persists
// the offset it queried, and the previous owner's last commit may have come in
// between (chaos K1 at load: 1050, then 990 on one leader 200 ms later). "May
// have" includes a node that started less than clients.ConsumerCoverage (70 s)
// ago, whose registry does not list a running group's consumers yet (chaos K3:
// 876, then 715, after every node restarted).
//
// Otherwise the value is set as sent: an operator's tool (mqadmin
// cloneGroupOffset, its resetOffsetByTime for a stopped group) moves offsets
// back that way; a running group is reset with INVOKE_BROKER_TO_RESET_OFFSET.
// Two moves back this ignores: a lite-pull consumer's seek while its group
// runs (it consumes from there, but a restart resumes from where it had
// reached), and an operator's lowering of a stopped group's offset within
// ConsumerCoverage of this node's start.
func (a *API) handleUpdateOffset(_ context.Context, req *route.Request) (*transport.Command, error) {
	e := route.FieldsOf(req.Command)
	group, topic := e.Str("consumerGroup", true), e.Str("topic", true)
	queueID, off := e.Int32("queueId", true, 0), e.Int64("commitOffset", true, 0)
	if e.Err != nil {
		return nil, e.Err
	}
	if a.d.Clients.MayHaveConsumers(group, a.mono()) {
		a.d.Offsets.Advance(group, topic, queueID, store.QueueOffset(off))
	} else {
		a.d.Offsets.Put(group, topic, queueID, store.QueueOffset(off))
	}
	return transport.NewResponse(transport.Success, ""), nil
}

func queueArgs(req *route.Request) (string, int32, *route.Fields) {
	e := route.FieldsOf(req.Command)
	topic, queueID := e.Str("topic", true), e.Int32("queueId", true, 0)
	return topic, queueID, e
}

// handleMaxOffset serves GET_MAX_OFFSET (30): the next offset to be written.
func (a *API) handleMaxOffset(_ context.Context, req *route.Request) (*transport.Command, error) {
	topic, queueID, e := queueArgs(req)
	if e.Err != nil {
		return nil, e.Err
	}
	return route.OK(map[string]string{"offset": strconv.FormatInt(int64(a.d.Store.MaxQueueOffset(topic, queueID)), 10)}, nil), nil
}

// handleMinOffset serves GET_MIN_OFFSET (31).
func (a *API) handleMinOffset(_ context.Context, req *route.Request) (*transport.Command, error) {
	topic, queueID, e := queueArgs(req)
	if e.Err != nil {
		return nil, e.Err
	}
	return route.OK(map[string]string{"offset": strconv.FormatInt(int64(a.d.Store.MinQueueOffset(topic, queueID)), 10)}, nil), nil
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP (29).
func (a *API) handleSearchOffset(_ context.Context, req *route.Request) (*transport.Command, error) {
	topic, queueID, e := queueArgs(req)
	ts := e.Int64("timestamp", true, 0)
	if e.Err != nil {
		return nil, e.Err
	}
	off := a.d.Store.SearchOffsetByTimestamp(topic, queueID, ts)
	return route.OK(map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, nil), nil
}
