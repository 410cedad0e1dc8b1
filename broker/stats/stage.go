package stats

import (
	"context"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// isSend reports the codes that store messages: what Apache's send thread
// pool serves and its putMessageDistributeTime measures.
func isSend(c transport.RequestCode) bool {
	switch c {
	case transport.SendMessage, transport.SendMessageV2, transport.SendBatchMessage,
		transport.SendReplyMessage, transport.SendReplyMessageV2:
		return true
	}
	return false
}

// SendStage times the send requests this node serves itself and counts the
// failed ones (ObserveSendResult). leading says whether this node leads: a
// follower relays sends to the leader, which counts them, so a follower's
// relays would count twice. Place it after the metrics stage, so the time is
// the handler's (and the authorisation's) and a denied send is a failure.
func (s *Stats) SendStage(leading func() bool) route.Stage {
	return func(next route.Handler) route.Handler {
		return func(ctx context.Context, req *route.Request) (*transport.Command, error) {
			if !isSend(req.RequestCode()) || !leading() {
				return next(ctx, req)
			}
			req.Started()
			req.After((*sendObserver)(s))
			return next(ctx, req)
		}
	}
}

// sendObserver is Stats as the After that times each send and counts the
// failed ones.
type sendObserver Stats

func (o *sendObserver) After(req *route.Request, resp *transport.Command, err error) (*transport.Command, error) {
	(*Stats)(o).ObserveSendResult(req.Elapsed(), err == nil && resp != nil && resp.ResponseCode() == transport.Success)
	return resp, err
}
