package broker

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rocketraft/rocketraft/broker/filter"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Expression types of SubscriptionData.expressionType.
const (
	expressionTag   = "TAG"
	expressionSQL92 = "SQL92"
)

// ErrSubscriptionParse reports a subscription expression that does not compile;
// it is answered with SUBSCRIPTION_PARSE_FAILED (23).
var ErrSubscriptionParse = errors.New("subscription expression does not parse")

// maxSQLFilters bounds the cache; past it the cache starts over (entries are
// cheap to rebuild, and only a misbehaving client creates that many versions).
const maxSQLFilters = 4096

type sqlFilterKey struct {
	group, topic string
	subVersion   int64
}

// sqlFilterCache holds compiled SQL92 subscriptions per (group, topic,
// subVersion), so an expression is parsed once per subscription version, not once
// per pull. The source text is kept and compared: Go push consumers send
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
		return nil, fmt.Errorf("%w: group=%s topic=%s: %w", ErrSubscriptionParse, group, topic, err)
	}
	c.mu.Lock()
	if len(c.m) >= maxSQLFilters {
		clear(c.m)
	}
	c.m[k] = e
	c.mu.Unlock()
	return e, nil
}

// len is the number of cached expressions (tests).
func (c *sqlFilterCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// sqlMessageFilter adapts an expression to the store's filter: variables are the
// message properties, read from the encoded property string only when needed.
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

// subscriptionFilter builds the store filter of a subscription of group:
// TAG (nil for all) or SQL92; anything else is refused.
func (r *clientRegistry) subscriptionFilter(group string, sub subscriptionData) (store.MessageFilter, *transport.Command) {
	switch sub.ExpressionType {
	case "", expressionTag:
		return sub.tagFilter(), nil
	case expressionSQL92:
		e, err := r.filters.get(group, sub.Topic, sub.SubVersion, sub.SubString)
		if err != nil {
			return nil, transport.NewResponse(transport.SubscriptionParseFailed, err.Error())
		}
		return sqlMessageFilter(e), nil
	default:
		return nil, transport.NewResponse(transport.SubscriptionParseFailed,
			fmt.Sprintf("group %s topic %s: expressionType %q is not TAG or SQL92", group, sub.Topic, sub.ExpressionType))
	}
}
