package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// event is one server-sent event.
type event struct {
	name string
	data any
}

// hub fans the sampler's events out to every open stream. A stream that
// falls behind loses events rather than slowing the sampler: its channel
// drops the oldest (the next cluster snapshot supersedes it anyway).
type hub struct {
	mu   sync.Mutex
	subs map[chan event]struct{}
	// last is the newest cluster event, sent first to a new stream.
	last *event
}

func (h *hub) subscribe() (chan event, func()) {
	ch := make(chan event, 16)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) publish(ev event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.name == "cluster" {
		h.last = &ev
	}
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			select { // full: drop the oldest, keep the newest
			case <-ch:
			default:
			}
			select {
			case ch <- ev:
			default:
			}
		}
	}
}

func (h *hub) latest() *event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// pingEvery keeps idle proxies from closing a stream.
const pingEvery = 15 * time.Second

// events serves GET /api/v1/events (docs/console-api.md § live stream).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed, Error: r.Method + " /api/v1/events: use GET"})
		return
	}
	if _, err := s.user(r); err != nil {
		writeError(w, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, &apiError{http.StatusInternalServerError, codeInternal, "", "this server cannot stream events"})
		return
	}
	ch, cancel := s.sampler.hub.subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var id uint64
	send := func(ev event) bool {
		b, err := json.Marshal(ev.data)
		if err != nil {
			return false
		}
		id++
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, ev.name, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	// A fresh stream starts with a snapshot: the newest sampled, or one taken now.
	first := s.sampler.hub.latest()
	if first == nil {
		if doc, err := s.snapshot(r.Context()); err == nil {
			first = &event{"cluster", doc}
		} else {
			ae := classify(err)
			first = &event{"clusterError", clusterErrorDoc{Time: s.cfg.Now().UnixMilli(), Error: ae.msg, Code: ae.code}}
		}
	}
	if !send(*first) {
		return
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case ev := <-ch:
			if !send(ev) {
				return
			}
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

type clusterErrorDoc struct {
	Time  int64  `json:"time"`
	Error string `json:"error"`
	Code  string `json:"code"`
}
