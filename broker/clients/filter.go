package clients

import (
	"fmt"
	"sync"

	"github.com/rocketraft/rocketraft/broker/filter"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
)

// Expression types of SubscriptionData.expressionType.
const (
	ExpressionTag   = "TAG"
	ExpressionSQL92 = "SQL92"
)

// MatchAll reports whether a TAG subscription accepts every message.
func (s Subscription) MatchAll() bool {
	return s.SubString == "" || s.SubString == "*" || len(s.TagsSet) == 0
}

// tagFilter builds the store filter of a TAG subscription: the tag hash must be
// one of the subscribed tags' codes, and then the TAGS property must match
// exactly (hash collisions never leak a foreign tag).
func (s Subscription) tagFilter() store.MessageFilter {
	if s.MatchAll() {
		return nil
	}
	codes := make(map[int64]struct{}, len(s.TagsSet))
	tags := make(map[string]struct{}, len(s.TagsSet))
	for _, t := range s.TagsSet {
		codes[store.TagsCode(t)] = struct{}{}
		tags[t] = struct{}{}
	}
	return func(tagsCode int64, props func() string) bool {
		if _, ok := codes[tagsCode]; !ok {
			return false
		}
		tag, _ := store.Property(props(), store.PropertyTags)
		_, ok := tags[tag]
		return ok
	}
}

// maxSQLFilters bounds the cache; past it the cache starts over (entries are
// cheap to rebuild, and only a misbehaving client creates that many versions).
const maxSQLFilters = 4096

type sqlFilterKey struct {
	group, topic string
	subVersion   int64
}

// sqlFilterCache holds compiled SQL92 subscriptions per (group, topic,
// subVersion), so an expression is parsed once per subscription version, not
// once per pull. The source text is kept and compared: Go push consumers send
// subVersion 0 on pulls and the heartbeat's version may repeat across restarts.
type sqlFilterCache struct {
	mu sync.Mutex
	m  map[sqlFilterKey]*filter.Expression
}

func newSQLFilterCache() *sqlFilterCache {
	return &sqlFilterCache{m: make(map[sqlFilterKey]*filter.Expression)}
}

// get returns the compiled expression, compiling it on a miss.
func (c *sqlFilterCache) get(group, topic string, subVersion int64, expr string) (*filter.Expression, error) {
	k := sqlFilterKey{group, topic, subVersion}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok && e.String() == expr {
		return e, nil
	}
	e, err := filter.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: group=%s topic=%s: %w", route.ErrSubscriptionParse, group, topic, err)
	}
	c.mu.Lock()
	if len(c.m) >= maxSQLFilters {
		clear(c.m)
	}
	c.m[k] = e
	c.mu.Unlock()
	return e, nil
}

// len is the number of cached expressions.
func (c *sqlFilterCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// sqlMessageFilter adapts an expression to the store's filter: variables are
// the message properties, read from the encoded property string only when needed.
func sqlMessageFilter(e *filter.Expression) store.MessageFilter {
	return func(_ int64, props func() string) bool {
		var encoded string
		loaded := false
		return e.Match(func(name string) (string, bool) {
			if !loaded {
				encoded, loaded = props(), true
			}
			return store.Property(encoded, name)
		})
	}
}

// subscriptionFilter builds the store filter of a subscription of group: TAG
// (nil for all) or SQL92; anything else is route.ErrSubscriptionParse.
func subscriptionFilter(cache *sqlFilterCache, group string, sub Subscription) (store.MessageFilter, error) {
	switch sub.ExpressionType {
	case "", ExpressionTag:
		return sub.tagFilter(), nil
	case ExpressionSQL92:
		e, err := cache.get(group, sub.Topic, sub.SubVersion, sub.SubString)
		if err != nil {
			return nil, err
		}
		return sqlMessageFilter(e), nil
	default:
		return nil, fmt.Errorf("%w: group %s topic %s: expressionType %q is not TAG or SQL92",
			route.ErrSubscriptionParse, group, sub.Topic, sub.ExpressionType)
	}
}
