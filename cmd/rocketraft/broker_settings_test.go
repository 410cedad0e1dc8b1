package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/transport"
)

type fakeBroker struct{ maxMessageSize int }

func (f *fakeBroker) SetMaxMessageSize(n int) { f.maxMessageSize = n }

type fakeStore struct {
	reserved time.Duration
	hours    []int
	ratio    float64
	refuse   error
}

func (f *fakeStore) SetRetention(reserved time.Duration, hours []int, ratio float64) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.reserved, f.hours, f.ratio = reserved, hours, ratio
	return nil
}

// TestLiveSettingsReachWhatRereadsThem: each live key reaches its setter (the
// log switches level at once), refusals map to the codes Apache's tools see,
// and a refused apply leaves the settings as they were.
func TestLiveSettingsReachWhatRereadsThem(t *testing.T) {
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs})
	child := log.Named("broker").With("node", "n0") // what the broker logs through
	b, st := &fakeBroker{}, &fakeStore{}
	s := &liveSettings{cfg: config.DefaultBroker(), targets: liveTargets{broker: b, store: st, log: log}}

	child.Debug("before the change")
	changes, err := s.Update("maxMessageSize=1024\nfileReservedTime=6\ndeleteWhen=02;14\ndiskMaxUsedSpaceRatio=50\nlogLevel=debug\n")
	if err != nil || len(changes) != 5 {
		t.Fatalf("update: %v %v", err, changes)
	}
	child.Debug("after the change")
	if b.maxMessageSize != 1024 || st.reserved != 6*time.Hour || !slices.Equal(st.hours, []int{2, 14}) || st.ratio != 0.5 {
		t.Errorf("setters got maxMessageSize %d, retention %v %v %v", b.maxMessageSize, st.reserved, st.hours, st.ratio)
	}
	if strings.Contains(logs.String(), "before the change") || !strings.Contains(logs.String(), "after the change") {
		t.Errorf("log level did not switch for the broker's logger:\n%s", logs.String())
	}
	if !strings.Contains(s.Properties(), "\nmaxMessageSize=1024\n") {
		t.Errorf("Properties do not show the change:\n%s", s.Properties())
	}

	_, err = s.Update("listenPort=1234\nbrokerIP1=10.0.0.1")
	if route.ResponseCode(err) != transport.NoPermission || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "listenPort") || !strings.Contains(err.Error(), "brokerIP1") {
		t.Errorf("not live: %v (%s)", err, route.ResponseCode(err))
	}
	if _, err = s.Update("logLevel=loud"); route.ResponseCode(err) != transport.InvalidParameter || !strings.Contains(err.Error(), "logLevel") {
		t.Errorf("bad value: %v", err)
	}
	if changes, err := s.Update("maxMessageSize=1024"); err != nil || changes != nil {
		t.Errorf("the value in force: %v %v", changes, err)
	}

	st.refuse = errors.New("store closed")
	if _, err := s.Update("maxMessageSize=4096"); err == nil || b.maxMessageSize != 1024 || s.cfg.MaxMessageSize != 1024 {
		t.Errorf("a refused apply: err %v, broker %d, settings %d", err, b.maxMessageSize, s.cfg.MaxMessageSize)
	}
}
