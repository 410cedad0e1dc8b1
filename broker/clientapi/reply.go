package clientapi

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Request/reply (rocketmq-protocol.md §2.1, 324/326): a requester sends a normal
// message carrying CORRELATION_ID and REPLY_TO_CLIENT; the responder answers with
// a message of MSG_TYPE=reply to <cluster>_REPLY_TOPIC through
// SEND_REPLY_MESSAGE, and the broker pushes it to the requesting client's
// connection with PUSH_REPLY_MESSAGE_TO_CLIENT, matched there by CORRELATION_ID.

// replyTopicSuffix names a cluster's reply topic (Go client GetReplyTopic).
const replyTopicSuffix = "_REPLY_TOPIC"

// replyPushTimeout bounds the push to the requester (Java uses 3 s too).
const replyPushTimeout = 3 * time.Second

// ReplyTopic is the topic replies of a cluster go to.
func ReplyTopic(cluster string) string { return cluster + replyTopicSuffix }

// handleSendReply serves SEND_REPLY_MESSAGE (324) on the leader, which holds
// the requester's connection (a producer heartbeats the leader): store the
// reply like any send (Java's storeReplyMessageEnable default), then push it to
// the requester.
func (a *API) handleSendReply(ctx context.Context, req *route.Request) (*transport.Command, error) {
	h, err := parseSendHeader(req.Command)
	if err != nil {
		return nil, err
	}
	target, _ := store.Property(h.Properties, propertyReplyToClient)
	if target == "" {
		return nil, fmt.Errorf("%w: reply message without %s", route.ErrBadHeader, propertyReplyToClient)
	}
	resp, queueID, err := a.send(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.ResponseCode() != transport.Success {
		return resp, nil
	}
	requester := a.d.Clients.ConnOfClient(target)
	if requester == nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("reply stored, but requester %s is not connected to %s", target, a.d.SelfID)), nil
	}
	push := transport.NewRequest(transport.PushReplyMessageToClient, map[string]string{
		"producerGroup":         h.ProducerGroup,
		"topic":                 h.Topic,
		"defaultTopic":          h.DefaultTopic,
		"defaultTopicQueueNums": strconv.Itoa(int(h.DefaultTopicQueueNums)),
		"queueId":               strconv.Itoa(int(queueID)),
		"sysFlag":               strconv.Itoa(int(h.SysFlag)),
		"bornTimestamp":         strconv.FormatInt(h.BornTimestamp, 10),
		"flag":                  strconv.Itoa(int(h.Flag)),
		"properties":            h.Properties,
		"reconsumeTimes":        strconv.Itoa(int(h.ReconsumeTimes)),
		"unitMode":              strconv.FormatBool(h.UnitMode),
		"bornHost":              req.Conn.RemoteAddr(),
		"storeHost":             a.d.ClientAddr,
		"storeTimestamp":        strconv.FormatInt(a.now().UnixMilli(), 10),
	}, req.Body)
	pctx, cancel := context.WithTimeout(ctx, replyPushTimeout)
	defer cancel()
	ack, err := requester.Invoke(pctx, push)
	if err != nil || ack.ResponseCode() != transport.Success {
		remark := fmt.Sprintf("reply stored, but pushing it to %s failed", target)
		if err != nil {
			remark += ": " + err.Error()
		}
		return transport.NewResponse(transport.SystemError, remark), nil
	}
	return resp, nil
}
