package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/adminapi"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/config"
)

// liveTargets are what re-reads each live key (config.LiveKeys) on a running
// node: the broker's send check, the store's retention, the log.
type liveTargets struct {
	broker interface{ SetMaxMessageSize(n int) }
	store  interface {
		SetRetention(reserved time.Duration, deleteWhenHours []int, diskMaxUsedRatio float64) error
	}
	log hclog.Logger
}

// apply hands every live key of next to what re-reads it. The store is first:
// it is the one that can refuse, and then nothing has changed.
func (t liveTargets) apply(next config.Broker) error {
	if err := t.store.SetRetention(next.FileReservedTime, next.DeleteWhen, float64(next.DiskMaxUsedSpaceRatio)/100); err != nil {
		return err
	}
	t.broker.SetMaxMessageSize(next.MaxMessageSize)
	t.log.SetLevel(hclog.LevelFromString(next.LogLevel))
	return nil
}

// liveSettings is broker.conf as this node runs it, for GET_BROKER_CONFIG and
// UPDATE_BROKER_CONFIG (adminapi.Settings): the loaded config, changed only by
// live updates, which are this node's until it restarts and are not written
// back to the file (docs/operations.md, "Changing settings live").
type liveSettings struct {
	mu      sync.Mutex
	cfg     config.Broker
	targets liveTargets // set once the broker exists, before it serves
}

func (s *liveSettings) Properties() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.PropertiesText()
}

// Update applies text's live keys (config.ApplyLive), all or none; a refusal
// is NO_PERMISSION for a key that cannot change live, as Apache answers for
// its black-listed keys, and INVALID_PARAMETER for an unknown key or a bad
// value, naming every key on one line.
func (s *liveSettings) Update(text string) ([]adminapi.SettingChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, changes, err := s.cfg.ApplyLive(text)
	if err != nil {
		reason := strings.ReplaceAll(err.Error(), "\n", "; ")
		if errors.Is(err, config.ErrNotLive) {
			return nil, fmt.Errorf("%w: %s", route.ErrNoPermission, reason)
		}
		return nil, fmt.Errorf("%w: %s", route.ErrBadHeader, reason)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	if err := s.targets.apply(next); err != nil {
		return nil, err
	}
	s.cfg = next
	out := make([]adminapi.SettingChange, len(changes))
	for i, c := range changes {
		out[i] = adminapi.SettingChange{Key: c.Key, Old: c.Old, New: c.New}
	}
	return out, nil
}
