package route

import (
	"fmt"
	"strings"
)

// Name and size limits (TopicValidator.java, Validators.java).
const (
	maxTopicLength = 127
	maxGroupLength = 120
	// MaxPropertiesLength bounds a message's encoded properties.
	MaxPropertiesLength = 32767
)

// System topics a client may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET);
// the broker itself writes them.
var notAllowedSendTopics = map[string]bool{
	"SCHEDULE_TOPIC_XXXX":         true,
	"RMQ_SYS_TRANS_HALF_TOPIC":    true,
	"RMQ_SYS_TRANS_OP_HALF_TOPIC": true,
	"TRANS_CHECK_MAX_TIME_TOPIC":  true,
	"SELF_TEST_TOPIC":             true,
	"OFFSET_MOVED_EVENT":          true,
	"rmq_sys_wheel_timer":         true,
	"rmq_sys_REVIVE_LOG_":         true,
}

// ValidateTopic applies RocketMQ's topic rule: ^[%|a-zA-Z0-9_-]+$, at most 127 characters.
func ValidateTopic(topic string) error {
	if topic == "" {
		return fmt.Errorf("%w: topic is empty", ErrTopicInvalid)
	}
	if len(topic) > maxTopicLength {
		return fmt.Errorf("%w: topic %q has %d characters, limit %d", ErrTopicInvalid, abbreviate(topic), len(topic), maxTopicLength)
	}
	for i := 0; i < len(topic); i++ {
		if !validNameChar(topic[i]) {
			return fmt.Errorf("%w: topic %q contains %q, allowed are letters, digits, %%, |, _ and -", ErrTopicInvalid, abbreviate(topic), topic[i])
		}
	}
	return nil
}

func validNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%' || c == '|' || c == '_' || c == '-'
}

// ValidateSendTopic adds the rule that clients may not write broker-owned topics.
func ValidateSendTopic(topic string) error {
	if err := ValidateTopic(topic); err != nil {
		return err
	}
	if notAllowedSendTopics[topic] || strings.HasPrefix(topic, "rmq_sys_REVIVE_LOG_") {
		return fmt.Errorf("%w: %s is a system topic", ErrTopicNotAllowed, topic)
	}
	return nil
}

// ValidateGroup applies RocketMQ's group rule: the topic alphabet, at most 120 characters.
func ValidateGroup(group string) error {
	if group == "" {
		return fmt.Errorf("%w: group is empty", ErrGroupInvalid)
	}
	if len(group) > maxGroupLength {
		return fmt.Errorf("%w: group %q has %d characters, limit %d", ErrGroupInvalid, abbreviate(group), len(group), maxGroupLength)
	}
	for i := 0; i < len(group); i++ {
		if !validNameChar(group[i]) {
			return fmt.Errorf("%w: group %q contains %q", ErrGroupInvalid, abbreviate(group), group[i])
		}
	}
	return nil
}

// ValidateMessage checks the size limits of one message.
func ValidateMessage(body []byte, properties string, maxBody int) error {
	if len(body) > maxBody {
		return fmt.Errorf("%w: body has %d bytes, maxMessageSize is %d", ErrBodyTooLarge, len(body), maxBody)
	}
	if len(properties) > MaxPropertiesLength {
		return fmt.Errorf("%w: properties have %d bytes, limit %d", ErrPropsTooLong, len(properties), MaxPropertiesLength)
	}
	return nil
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
