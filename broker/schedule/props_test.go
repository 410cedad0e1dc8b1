package schedule_test

import (
	"errors"
	"testing"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/store"
)

func TestDelayLevelOf(t *testing.T) {
	for _, c := range []struct {
		props string
		level schedule.DelayLevel
		ok    bool
		bad   bool
	}{
		{"", 0, false, false},
		{store.EncodeProperties(map[string]string{store.PropertyDelayLevel: ""}), 0, false, false},
		{store.EncodeProperties(map[string]string{store.PropertyDelayLevel: "0"}), 0, false, false},
		{store.EncodeProperties(map[string]string{store.PropertyDelayLevel: "-2"}), 0, false, false},
		{store.EncodeProperties(map[string]string{store.PropertyDelayLevel: "30"}), 30, true, false},
		{store.EncodeProperties(map[string]string{store.PropertyDelayLevel: "x"}), 0, false, true},
	} {
		level, ok, err := schedule.DelayLevelOf(c.props)
		if level != c.level || ok != c.ok || (err != nil) != c.bad || (c.bad && !errors.Is(err, route.ErrBadHeader)) {
			t.Errorf("DelayLevelOf(%q) = %d %v %v, want %d %v bad=%v", c.props, level, ok, err, c.level, c.ok, c.bad)
		}
	}
}

func TestDelayedAndTimedProps(t *testing.T) {
	in := store.EncodeProperties(map[string]string{store.PropertyUniqKey: "U", store.PropertyTimerDeliverMS: "1",
		schedule.PropTimerDelaySec: "2", schedule.PropTimerDelayMS: "3"})
	want := map[string]string{store.PropertyUniqKey: "U", store.PropertyDelayLevel: "4",
		store.PropertyRealTopic: "T", store.PropertyRealQueueID: "3"}
	check := func(name string, got map[string]string, want map[string]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s: %v, want %v", name, got, want)
			}
		}
	}
	check("DelayedProps", store.ParseProperties(schedule.DelayedProps(in, "T", 3, 4)), want)
	want[store.PropertyTimerDeliverMS] = "1" // a timed message keeps its time
	check("TimedProps", store.ParseProperties(schedule.TimedProps(in, "T", 3, 4)), want)
}
