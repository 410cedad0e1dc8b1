package route

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateTopic(t *testing.T) {
	ok := []string{"TopicTest", "%RETRY%g", "a|b", "x_y-z", strings.Repeat("t", 127)}
	for _, topic := range ok {
		if err := ValidateSendTopic(topic); err != nil {
			t.Errorf("%q rejected: %v", topic, err)
		}
	}
	bad := map[string]error{
		"":                         ErrTopicInvalid,
		strings.Repeat("t", 128):   ErrTopicInvalid,
		"a b":                      ErrTopicInvalid,
		"topic/../x":               ErrTopicInvalid,
		"SCHEDULE_TOPIC_XXXX":      ErrTopicNotAllowed,
		"RMQ_SYS_TRANS_HALF_TOPIC": ErrTopicNotAllowed,
	}
	for topic, want := range bad {
		if err := ValidateSendTopic(topic); !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", topic, err, want)
		}
	}
	if err := ValidateMessage(make([]byte, 11), "", 10); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("body limit: %v", err)
	}
	if err := ValidateMessage(nil, strings.Repeat("p", 32768), 10); !errors.Is(err, ErrPropsTooLong) {
		t.Errorf("props limit: %v", err)
	}
	if err := ValidateGroup(strings.Repeat("g", 121)); !errors.Is(err, ErrGroupInvalid) {
		t.Errorf("group limit: %v", err)
	}
}
