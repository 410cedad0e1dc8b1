package auth

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

const (
	retryPrefix = "%RETRY%"
	// traceTopic may always be published to (Apache's only system-topic rule):
	// every client with tracing on writes it.
	traceTopic = "RMQ_SYS_TRACE_TOPIC"
)

// ACL administration codes (RocketMQ 4.9 AdminBrokerProcessor); admin-only
// here, unlike Apache 4.9, which let any signed account rewrite the ACL.
const (
	codeUpdateACL       transport.RequestCode = 50
	codeDeleteACL       transport.RequestCode = 51
	codeACLInfo         transport.RequestCode = 52
	codeUpdateGlobalACL transport.RequestCode = 53
	codeACLConfig       transport.RequestCode = 54
	// Broker config and subscription-group writes (Apache's admin codes).
	codeUpdateBrokerConfig  transport.RequestCode = 25
	codeGetBrokerConfig     transport.RequestCode = 26
	codeUpdateSubGroup      transport.RequestCode = 200
	codeDeleteSubGroup      transport.RequestCode = 207
	rocketraftAdminCodeLow  transport.RequestCode = 9100
	rocketraftAdminCodeHigh transport.RequestCode = 9199
)

// adminOnly reports the codes only an admin account may send: every topic,
// group, broker-config, offset-reset, raft-membership and ACL code.
func adminOnly(c transport.RequestCode) bool {
	switch c {
	case transport.UpdateAndCreateTopic, transport.DeleteTopicInBroker, transport.InvokeBrokerToResetOffset,
		codeUpdateBrokerConfig, codeGetBrokerConfig, codeUpdateSubGroup, codeDeleteSubGroup,
		codeUpdateACL, codeDeleteACL, codeACLInfo, codeUpdateGlobalACL, codeACLConfig:
		return true
	}
	return c >= rocketraftAdminCodeLow && c <= rocketraftAdminCodeHigh
}

type resourceKind uint8

const (
	topicResource resourceKind = iota
	groupResource
)

func (k resourceKind) String() string { return [...]string{"topic", "group"}[k] }

// need is one resource a request uses and the permission it needs there.
type need struct {
	kind resourceKind
	name string
	perm Perm
}

// topicNeed names a topic; a %RETRY%<group> topic is the group <group>.
func topicNeed(topic string, p Perm) need {
	if g, ok := strings.CutPrefix(topic, retryPrefix); ok {
		return need{groupResource, g, PermSub}
	}
	return need{topicResource, topic, p}
}

func groupNeed(group string) need {
	return need{groupResource, strings.TrimPrefix(group, retryPrefix), PermSub}
}

// needs lists the resources a request names (RocketMQ's PlainAccessValidator
// and ACL 2.0's DefaultAuthorizationContextBuilder, which agree on these).
// Codes not listed need only a valid signature.
func needs(code transport.RequestCode, ext map[string]string, body []byte) ([]need, error) {
	switch code {
	case transport.SendMessage, transport.SendReplyMessage:
		return []need{topicNeed(ext["topic"], PermPub)}, nil
	case transport.SendMessageV2, transport.SendBatchMessage, transport.SendReplyMessageV2:
		topic := ext["b"]
		if topic == "" {
			topic = ext["topic"] // a V1 header on a V2 code
		}
		return []need{topicNeed(topic, PermPub)}, nil
	case transport.ConsumerSendMsgBack:
		return []need{groupNeed(ext["group"])}, nil
	case transport.PullMessage, transport.LitePullMessage, transport.QueryConsumerOffset, transport.UpdateConsumerOffset:
		return []need{topicNeed(ext["topic"], PermSub), groupNeed(ext["consumerGroup"])}, nil
	case transport.QueryMessage, transport.GetMaxOffset, transport.GetMinOffset, transport.SearchOffsetByTimestamp:
		return []need{topicNeed(ext["topic"], PermSub)}, nil
	case transport.UnregisterClient, transport.GetConsumerListByGroup:
		return []need{groupNeed(ext["consumerGroup"])}, nil
	case transport.HeartBeat:
		return heartbeatNeeds(body)
	case transport.LockBatchMQ, transport.UnlockBatchMQ:
		return lockNeeds(body)
	}
	return nil, nil
}

// heartbeatNeeds: every consumer group, and every topic it subscribes to.
// Producer groups are not checked (Apache neither): a producer is checked on
// each send.
func heartbeatNeeds(body []byte) ([]need, error) {
	hb, err := clients.ParseHeartbeat(body)
	if err != nil {
		return nil, err
	}
	var out []need
	for _, c := range hb.ConsumerDataSet {
		out = append(out, groupNeed(c.GroupName))
		for _, s := range c.SubscriptionDataSet {
			out = append(out, topicNeed(s.Topic, PermSub))
		}
	}
	return out, nil
}

// lockNeeds: the group and every topic of the queues to lock.
func lockNeeds(body []byte) ([]need, error) {
	var lb struct {
		ConsumerGroup string                 `json:"consumerGroup"`
		MQSet         []clients.MessageQueue `json:"mqSet"`
	}
	if err := json.Unmarshal(body, &lb); err != nil {
		return nil, fmt.Errorf("%w: lock body: %v", route.ErrBadHeader, err)
	}
	out := []need{groupNeed(lb.ConsumerGroup)}
	for _, mq := range lb.MQSet {
		out = append(out, topicNeed(mq.Topic, PermSub))
	}
	return out, nil
}
