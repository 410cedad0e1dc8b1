package adminapi

import (
	"context"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// relayTimeout bounds a request the broker relays to a client (307); Java uses 5 s.
const relayTimeout = 5 * time.Second

// consumerRunningInfo serves GET_CONSUMER_RUNNING_INFO (307) from admin tools:
// ext consumerGroup, clientId, jstackEnable. The request is relayed to the
// client's own connection and its answer (a ConsumerRunningInfo body, which the
// Go client writes with object keys, so not strict JSON) is returned unchanged.
// Every node can relay: clients heartbeat every node. A client that is not
// connected, or does not answer, is a SYSTEM_ERROR answer naming it.
func (a *API) consumerRunningInfo(ctx context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group, clientID := f.Str("consumerGroup", true), f.Str("clientId", true)
	if f.Err != nil {
		return nil, f.Err
	}
	conn := a.d.Clients.ConsumerConn(group, clientID)
	if conn == nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("consumer %s of group %s is not connected to %s", clientID, group, a.d.SelfID)), nil
	}
	rctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	fwd := transport.NewRequest(transport.GetConsumerRunningInfo, map[string]string{
		"consumerGroup": group, "clientId": clientID, "jstackEnable": req.Field("jstackEnable"),
	}, nil)
	resp, err := conn.Invoke(rctx, fwd)
	if err != nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("relay GET_CONSUMER_RUNNING_INFO to %s (%s): %v", clientID, conn.RemoteAddr(), err)), nil
	}
	out := transport.NewResponse(resp.ResponseCode(), resp.Remark)
	out.Body = resp.Body
	return out, nil
}
