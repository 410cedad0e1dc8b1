package clientapi

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// handleQueryMessage serves QUERY_MESSAGE (12): messages whose KEYS or UNIQ_KEY
// equal key, newest index files first.
func (a *API) handleQueryMessage(_ context.Context, req *route.Request) (*transport.Command, error) {
	e := route.FieldsOf(req.Command)
	topic, key := e.Str("topic", true), e.Str("key", true)
	maxNum := int(e.Int32("maxNum", false, 32))
	begin, end := e.Int64("beginTimestamp", false, 0), e.Int64("endTimestamp", false, 1<<62)
	if e.Err != nil {
		return nil, e.Err
	}
	st := a.d.Store
	offs, err := st.QueryByKey(topic, key, maxNum, begin, end)
	if err != nil {
		return nil, err
	}
	var parts [][]byte
	var releases []func()
	for _, off := range offs {
		msg, release, err := st.ReadMessageAt(off)
		if err != nil {
			continue // removed by retention meanwhile
		}
		parts = append(parts, msg)
		releases = append(releases, release)
	}
	if len(parts) == 0 {
		return transport.NewResponse(transport.QueryNotFound, fmt.Sprintf("no message with key %s in %s", key, topic)), nil
	}
	r := route.OK(map[string]string{
		"indexLastUpdateTimestamp": "0",
		"indexLastUpdatePhyoffset": strconv.FormatInt(int64(st.MaxPhysicalOffset()), 10),
	}, nil)
	r.BodyParts = parts
	r.OnWritten = func() {
		for _, f := range releases {
			f()
		}
	}
	return r, nil
}

// handleViewMessage serves VIEW_MESSAGE_BY_ID (33): one message by physical offset.
func (a *API) handleViewMessage(_ context.Context, req *route.Request) (*transport.Command, error) {
	e := route.FieldsOf(req.Command)
	off := e.Int64("offset", true, 0)
	if e.Err != nil {
		return nil, e.Err
	}
	msg, release, err := a.d.Store.ReadMessageAt(store.PhysicalOffset(off))
	if err != nil {
		return transport.NewResponse(transport.SystemError, fmt.Sprintf("no message at offset %d: %v", off, err)), nil
	}
	r := route.OK(nil, nil)
	r.BodyParts = [][]byte{msg}
	r.OnWritten = release
	return r, nil
}
