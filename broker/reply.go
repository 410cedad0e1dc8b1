package broker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Request/reply (rocketmq-protocol.md §2.1, 324/326): a requester sends a normal
// message carrying CORRELATION_ID and REPLY_TO_CLIENT; the responder answers with a
// message of MSG_TYPE=reply to <cluster>_REPLY_TOPIC through SEND_REPLY_MESSAGE, and
// the broker pushes it to the requesting client's connection with
// PUSH_REPLY_MESSAGE_TO_CLIENT, matched there by CORRELATION_ID.

const (
	propertyCluster       = "CLUSTER"
	propertyReplyToClient = "REPLY_TO_CLIENT"
	replyTopicSuffix      = "_REPLY_TOPIC"
	// replyPushTimeout bounds the push to the requester (Java uses 3 s too).
	replyPushTimeout = 3 * time.Second
)

// replyTopic is the topic replies of a cluster go to (Go client GetReplyTopic).
func replyTopic(cluster string) string { return cluster + replyTopicSuffix }

// withCluster adds the CLUSTER property, as Java's SendMessageProcessor does for
// every message: a responder builds its reply topic from it.
func withCluster(props, cluster string) string {
	if cluster == "" {
		return props
	}
	if _, ok := store.Property(props, propertyCluster); ok {
		return props
	}
	return props + propertyCluster + "\x01" + cluster + "\x02"
}

// ensureReplyTopic creates <cluster>_REPLY_TOPIC on a new leader (Java's
// TopicConfigManager creates it at start-up), so responders have a route.
func (b *Broker) ensureReplyTopic() {
	if b.cfg.ClusterName == "" {
		return
	}
	name := replyTopic(b.cfg.ClusterName)
	if validateTopic(name) != nil {
		return
	}
	if _, ok := b.replica.Topic(name); ok {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	t := TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite}
	if err := b.replica.UpsertTopic(ctx, t); err != nil {
		b.log.Warn("create reply topic failed", "topic", name, "error", err)
	}
}

// handleSendReply serves SEND_REPLY_MESSAGE (324): store the reply like any send
// (Java's storeReplyMessageEnable default), then push it to the requester. A
// follower forwards the request to the leader, which holds the requester's
// connection (a producer heartbeats the leader).
func (b *Broker) handleSendReply(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	h, err := parseSendHeader(req.ExtFields)
	if err != nil {
		return errorResponse(err)
	}
	target, _ := store.Property(h.Properties, propertyReplyToClient)
	if target == "" {
		return errorResponse(fmt.Errorf("%w: reply message without %s", ErrBadHeader, propertyReplyToClient))
	}
	resp := b.handleSend(ctx, conn, req)
	if resp.ResponseCode() != transport.Success {
		return resp
	}
	requester := b.clients.connOfClient(target)
	if requester == nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("reply stored, but requester %s is not connected to %s", target, b.cfg.SelfID))
	}
	push := transport.NewRequest(transport.PushReplyMessageToClient, map[string]string{
		"producerGroup":         h.ProducerGroup,
		"topic":                 h.Topic,
		"defaultTopic":          h.DefaultTopic,
		"defaultTopicQueueNums": strconv.Itoa(int(h.DefaultTopicQueueNums)),
		"queueId":               resp.ExtFields["queueId"],
		"sysFlag":               strconv.Itoa(int(h.SysFlag)),
		"bornTimestamp":         strconv.FormatInt(h.BornTimestamp, 10),
		"flag":                  strconv.Itoa(int(h.Flag)),
		"properties":            h.Properties,
		"reconsumeTimes":        strconv.Itoa(int(h.ReconsumeTimes)),
		"unitMode":              strconv.FormatBool(h.UnitMode),
		"bornHost":              conn.RemoteAddr(),
		"storeHost":             b.cfg.ClientAddr,
		"storeTimestamp":        strconv.FormatInt(time.Now().UnixMilli(), 10),
	}, req.Body)
	pctx, cancel := context.WithTimeout(ctx, replyPushTimeout)
	defer cancel()
	ack, err := requester.Invoke(pctx, push)
	if err != nil || ack.ResponseCode() != transport.Success {
		remark := fmt.Sprintf("reply stored, but pushing it to %s failed", target)
		if err != nil {
			remark += ": " + err.Error()
		}
		return transport.NewResponse(transport.SystemError, remark)
	}
	return resp
}
