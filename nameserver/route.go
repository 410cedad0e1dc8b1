package nameserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// BrokerID is a broker's id inside its brokerName group: 0 is the master (the Raft
// leader in rocketraft), 1.. are slaves (followers). It is not a Raft server id.
type BrokerID int64

// MasterID is the broker id clients send writes to.
const MasterID BrokerID = 0

// Perm is the topic permission bit set (RocketMQ PermName).
type Perm int32

// Permission bits; normal topics use PermRead|PermWrite (6), TBW102 adds PermInherit (7).
const (
	PermPriority Perm = 8
	PermRead     Perm = 4
	PermWrite    Perm = 2
	PermInherit  Perm = 1
)

// DataVersion is RocketMQ's DataVersion. rocketraft brokers put the Raft term in
// StateVersion so the nameserver can fence a deposed leader (design.md §7).
type DataVersion struct {
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
	Counter      int64 `json:"counter"`
}

// QueueData is one brokerName's queues for a topic, as carried in TopicRouteData.
// The field is topicSysFlag (Java's name); the Go client reads topicSynFlag and so
// always sees 0, which is harmless.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           Perm   `json:"perm"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
}

// BrokerAddrs maps broker id to client-facing address. It has its own JSON form
// because the Go client parses it by hand (see MarshalJSON).
type BrokerAddrs map[BrokerID]string

// MarshalJSON writes {"0":"host:port","1":"host:port"}: quoted ids in numeric
// order, no whitespace at all. rocketmq-client-go splits the object text on ',' and
// ':' and strips quotes; a single space turns the next entry into a bogus id 0 that
// overwrites the master. A nil map is written as {} because the same parser
// panics on a missing or null brokerAddrs.
func (a BrokerAddrs) MarshalJSON() ([]byte, error) {
	ids := make([]BrokerID, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range ids {
		addr := a[id]
		if err := checkAddr(addr); err != nil {
			return nil, fmt.Errorf("brokerAddrs id=%d: %w", id, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strconv.FormatInt(int64(id), 10))
		b.WriteString(`":"`)
		b.WriteString(addr)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON accepts the standard form with quoted ids. (A Java nameserver's
// fastjson form with bare ids is turned into it first by quoteBareKeys.)
func (a *BrokerAddrs) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("brokerAddrs: %w", err)
	}
	out := make(BrokerAddrs, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return fmt.Errorf("brokerAddrs key %q: %w", k, ErrInvalidRequest)
		}
		out[BrokerID(id)] = v
	}
	*a = out
	return nil
}

// quoteBareKeys rewrites fastjson's non-standard object keys made of digits
// ({0:"a"} → {"0":"a"}), which a Java nameserver emits for brokerAddrs in
// GET_BROKER_CLUSTER_INFO and in routes for old clients. Strings are copied
// untouched; anything else is left for encoding/json to judge.
func quoteBareKeys(data []byte) []byte {
	out := make([]byte, 0, len(data)+16)
	inString, escaped := false, false
	expectKey := false // just after '{' or ',' (outside strings)
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString, expectKey = true, false
		case c == '{' || c == ',':
			expectKey = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case expectKey && (c == '-' || (c >= '0' && c <= '9')):
			j := i + 1
			for j < len(data) && data[j] >= '0' && data[j] <= '9' {
				j++
			}
			k := j
			for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
				k++
			}
			if k < len(data) && data[k] == ':' {
				out = append(out, '"')
				out = append(out, data[i:j]...)
				out = append(out, '"')
				i = j - 1
				expectKey = false
				continue
			}
			expectKey = false
		default:
			expectKey = false
		}
		out = append(out, c)
	}
	return out
}

// unmarshalLenient decodes data into v, retrying once with bare keys quoted.
func unmarshalLenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		if err2 := json.Unmarshal(quoteBareKeys(data), v); err2 == nil {
			return nil
		}
	}
	return err
}

// checkAddr rejects addresses the Go client's hand parser would mangle: it splits on
// ',' and removes every '"', and any whitespace survives into the address.
func checkAddr(addr string) error {
	if addr == "" {
		return fmt.Errorf("empty broker address: %w", ErrInvalidRequest)
	}
	if strings.ContainsAny(addr, ",\"\\{} \t\r\n") {
		return fmt.Errorf("broker address %q has characters the route JSON cannot carry: %w", addr, ErrInvalidRequest)
	}
	return nil
}

// BrokerData is one brokerName group in a route or cluster listing.
type BrokerData struct {
	Cluster            string      `json:"cluster"`
	BrokerName         string      `json:"brokerName"`
	BrokerAddrs        BrokerAddrs `json:"brokerAddrs"`
	ZoneName           string      `json:"zoneName,omitempty"`
	EnableActingMaster bool        `json:"enableActingMaster"`
}

// TopicRouteData is the body of a GET_ROUTEINFO_BY_TOPIC (105) response.
type TopicRouteData struct {
	OrderTopicConf    string              `json:"orderTopicConf,omitempty"`
	QueueDatas        []QueueData         `json:"queueDatas"`
	BrokerDatas       []BrokerData        `json:"brokerDatas"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
}

// MarshalJSON guarantees the shapes the Go client needs: queueDatas and brokerDatas
// are arrays (never null; a null queueDatas drops the whole route) and every
// brokerAddrs is an object.
func (r TopicRouteData) MarshalJSON() ([]byte, error) {
	type plain TopicRouteData // no methods: avoids recursion
	p := plain(r)
	if p.QueueDatas == nil {
		p.QueueDatas = []QueueData{}
	}
	if p.BrokerDatas == nil {
		p.BrokerDatas = []BrokerData{}
	}
	if p.FilterServerTable == nil {
		p.FilterServerTable = map[string][]string{}
	}
	return json.Marshal(p)
}

// ClusterInfo is the body of a GET_BROKER_CLUSTER_INFO (106) response.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// TopicList is the body of a GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206) response.
type TopicList struct {
	TopicList []string `json:"topicList"`
}

// MarshalJSON writes an empty list as [] rather than null.
func (l TopicList) MarshalJSON() ([]byte, error) {
	type plain TopicList
	p := plain(l)
	if p.TopicList == nil {
		p.TopicList = []string{}
	}
	return json.Marshal(p)
}
