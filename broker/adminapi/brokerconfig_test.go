package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// fakeSettings holds key=value pairs; "live" keys change, "fixed" ones are
// refused as config.ApplyLive refuses them.
type fakeSettings struct{ values map[string]string }

func (f *fakeSettings) Properties() string {
	return fmt.Sprintf("fixed=%s\nlive=%s\n", f.values["fixed"], f.values["live"])
}

func (f *fakeSettings) Update(text string) ([]SettingChange, error) {
	var changes []SettingChange
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "live":
			changes = append(changes, SettingChange{k, f.values[k], v})
		case "fixed":
			return nil, fmt.Errorf("%w: %s=%q: cannot change while the broker runs", route.ErrNoPermission, k, v)
		default:
			return nil, fmt.Errorf("%w: %s: unknown key", route.ErrBadHeader, k)
		}
	}
	for _, c := range changes {
		f.values[c.Key] = c.New
	}
	return changes, nil
}

func TestBrokerConfigGetAndUpdate(t *testing.T) {
	fx := newFixture(t)
	fs := &fakeSettings{values: map[string]string{"fixed": "a", "live": "1"}}
	fx.api.d.Settings = fs
	ctx := context.Background()
	get := func() (string, map[string]any) {
		t.Helper()
		resp, err := fx.api.brokerConfig(ctx, request(transport.GetBrokerConfig, nil))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(resp.Field("version")), &v); err != nil {
			t.Fatalf("ext version %q: %v", resp.Field("version"), err)
		}
		return string(resp.Body), v
	}
	body, v := get()
	if body != "fixed=a\nlive=1\n" || v["counter"] != 0.0 || v["timestamp"] == nil {
		t.Fatalf("get: %q version %v", body, v)
	}
	update := func(text string) (*transport.Command, error) {
		req := request(transport.UpdateBrokerConfig, nil)
		req.Body = []byte(text)
		return fx.api.updateBrokerConfig(ctx, req)
	}
	resp, err := update("live=2\n")
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Changes []SettingChange }
	if err := json.Unmarshal(resp.Body, &answer); err != nil || len(answer.Changes) != 1 || answer.Changes[0] != (SettingChange{"live", "1", "2"}) {
		t.Fatalf("update answer %s: %v", resp.Body, err)
	}
	if body, v = get(); body != "fixed=a\nlive=2\n" || v["counter"] != 1.0 {
		t.Errorf("after update: %q %v", body, v)
	}
	// Refusals keep their code and name the key.
	_, err = update("fixed=b\n")
	if route.ResponseCode(err) != transport.NoPermission || !strings.Contains(err.Error(), "fixed") {
		t.Errorf("not live: %v (%s)", err, route.ResponseCode(err))
	}
	_, err = update("nope=1\n")
	if route.ResponseCode(err) != transport.InvalidParameter || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown: %v", err)
	}
	if _, err = update(""); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("empty body: %v", err)
	}
	if _, v = get(); v["counter"] != 1.0 {
		t.Errorf("refused updates moved the version: %v", v)
	}
	// A node without settings says so rather than answering nothing.
	fx.api.d.Settings = nil
	if _, err := fx.api.brokerConfig(ctx, request(transport.GetBrokerConfig, nil)); !errors.Is(err, errNoSettings) {
		t.Errorf("no settings: %v", err)
	}
}
