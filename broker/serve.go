package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// serve dispatches one request and records it in the broker's metrics, if any
// (metrics.go).
func (b *Broker) serve(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	m := b.metrics()
	if m == nil {
		return b.dispatch(ctx, conn, req)
	}
	start := time.Now()
	resp := b.dispatch(ctx, conn, req)
	m.observeRequest(req, resp, time.Since(start))
	return resp
}

// dispatch routes one request by code. Every handler returns a response or nil
// (no answer); unknown codes get REQUEST_CODE_NOT_SUPPORTED naming the code.
func (b *Broker) dispatch(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	switch req.RequestCode() {
	case transport.SendReplyMessage, transport.SendReplyMessageV2:
		return b.handleSendReply(ctx, conn, req)
	case transport.SendMessage, transport.SendMessageV2, transport.SendBatchMessage:
		return b.handleSend(ctx, conn, req)
	case transport.PullMessage:
		return b.handlePull(ctx, conn, req)
	case transport.ConsumerSendMsgBack:
		return b.handleSendBack(ctx, req)
	case transport.EndTransaction:
		return b.handleEndTransaction(ctx, req)
	case transport.HeartBeat:
		return b.handleHeartbeat(ctx, conn, req)
	case transport.UnregisterClient:
		b.onConnClose(conn)
		return transport.NewResponse(transport.Success, "")
	case transport.GetConsumerListByGroup:
		return b.handleConsumerList(req)
	case transport.QueryConsumerOffset:
		return b.handleQueryOffset(req)
	case transport.UpdateConsumerOffset:
		return b.handleUpdateOffset(ctx, req)
	case transport.GetMaxOffset:
		return b.handleMaxOffset(req)
	case transport.GetMinOffset:
		return b.handleMinOffset(req)
	case transport.SearchOffsetByTimestamp:
		return b.handleSearchOffset(req)
	case transport.UpdateAndCreateTopic:
		return b.handleCreateTopic(ctx, req)
	case transport.DeleteTopicInBroker:
		return b.handleDeleteTopic(ctx, req)
	case transport.GetAllSubscriptionGroupConfig:
		return b.handleAllSubscriptionGroups()
	case transport.QueryMessage:
		return b.handleQueryMessage(req)
	case transport.ViewMessageByID:
		return b.handleViewMessage(req)
	case transport.GetBrokerRuntimeInfo:
		return b.handleRuntimeInfo()
	case transport.RaftPeers:
		return b.handleRaftPeers()
	case transport.RaftTransferLeader, transport.RaftAddVoter, transport.RaftAddNonvoter, transport.RaftRemoveServer:
		return b.handleRaftChange(ctx, req)
	case transport.RaftSnapshot:
		return b.handleRaftSnapshot()
	case transport.ConsumerProgress:
		return b.handleConsumerProgress(ctx, req)
	case transport.LockBatchMQ:
		return b.handleLockBatch(ctx, req)
	case transport.UnlockBatchMQ:
		return b.handleUnlockBatch(ctx, req)
	case transport.GetConsumerRunningInfo:
		return b.handleConsumerRunningInfo(ctx, req)
	case transport.InvokeBrokerToResetOffset:
		return b.handleResetOffset(ctx, req)
	default:
		return transport.NewResponse(transport.RequestCodeNotSupported,
			fmt.Sprintf("request code %d is not supported", req.Code))
	}
}

// errorResponse maps err through the one error table.
func errorResponse(err error) *transport.Command {
	return transport.NewResponse(responseCode(err), err.Error())
}

func okResponse(ext map[string]string, body []byte) *transport.Command {
	r := transport.NewResponse(transport.Success, "")
	r.ExtFields = ext
	r.Body = body
	return r
}
