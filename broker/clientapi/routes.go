package clientapi

import (
	"context"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// Register puts every client request code in t with the policy that says what
// a follower does with it: writes go to the leader, reads of applied state and
// soft state are served by every node.
func (a *API) Register(t *route.Table) {
	// Sends run on the connection's reader goroutine: handleSend never blocks it.
	t.HandleInline(route.Leader, a.handleSend, transport.SendMessage, transport.SendMessageV2, transport.SendBatchMessage)
	t.Handle(route.Leader, a.handleSendReply, transport.SendReplyMessage, transport.SendReplyMessageV2)
	t.Handle(route.Leader, a.handleSendBack, transport.ConsumerSendMsgBack)
	t.Handle(route.Leader, a.handleEndTransaction, transport.EndTransaction)
	t.Handle(route.Leader, a.handleLockBatch, transport.LockBatchMQ)
	t.Handle(route.Leader, a.handleUnlockBatch, transport.UnlockBatchMQ)
	t.Handle(route.LeaderOneway, a.handleUpdateOffset, transport.UpdateConsumerOffset)

	// LITE_PULL_MESSAGE (361, Java 5.x lite-pull consumers) is PULL_MESSAGE
	// under its own code, as Apache serves it. A pull of a queue's newest
	// messages runs on the reader goroutine, as sends do (pullServedInline).
	t.HandleInlineWhen(route.Local, a.handlePull, a.pullServedInline, transport.PullMessage, transport.LitePullMessage)
	t.Handle(route.Local, a.handleHeartbeat, transport.HeartBeat)
	t.Handle(route.Local, a.handleUnregisterClient, transport.UnregisterClient)
	t.Handle(route.Local, a.handleCheckClientConfig, transport.CheckClientConfig)
	t.Handle(route.Local, a.handleConsumerList, transport.GetConsumerListByGroup)
	t.Handle(route.Leader, a.handleQueryOffset, transport.QueryConsumerOffset)
	t.Handle(route.Local, a.handleMaxOffset, transport.GetMaxOffset)
	t.Handle(route.Local, a.handleMinOffset, transport.GetMinOffset)
	t.Handle(route.Local, a.handleSearchOffset, transport.SearchOffsetByTimestamp)
	t.Handle(route.Local, a.handleQueryMessage, transport.QueryMessage)
	t.Handle(route.Local, a.handleViewMessage, transport.ViewMessageByID)
}

// handleUnregisterClient serves UNREGISTER_CLIENT (35): the client's
// registrations go as if its connection had closed.
func (a *API) handleUnregisterClient(_ context.Context, req *route.Request) (*transport.Command, error) {
	if req.Conn != nil {
		for _, g := range a.d.Clients.RemoveConn(req.Conn.ID()) {
			a.d.Clients.NotifyConsumerIDsChanged(g)
		}
	}
	return transport.NewResponse(transport.Success, ""), nil
}
