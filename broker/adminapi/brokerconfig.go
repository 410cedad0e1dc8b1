package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// errNoSettings: a node wired without Settings (in-process tests) serves no
// configuration.
var errNoSettings = errors.New("this node was started without its broker.conf settings")

// brokerConfig serves GET_BROKER_CONFIG (26) on the node addressed: the body
// is Java properties text, and ext version is the DataVersion of this node's
// settings (the counter counts the live updates since start), as Apache's
// AdminBrokerProcessor answers mqadmin getBrokerConfig.
func (a *API) brokerConfig(context.Context, *route.Request) (*transport.Command, error) {
	if a.d.Settings == nil {
		return nil, errNoSettings
	}
	a.settingsMu.Lock()
	text, v := a.d.Settings.Properties(), dataVersion{Timestamp: a.settingsSince, Counter: a.settingsUpdates}
	a.settingsMu.Unlock()
	version, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return route.OK(map[string]string{"version": string(version)}, []byte(text)), nil
}

// updateBrokerConfig serves UPDATE_BROKER_CONFIG (25) on the node addressed,
// as Apache's does on the broker address it is sent to: the change is this
// node's, lasts until it restarts, and is not written to broker.conf. The
// answer's body lists the changes ({"changes":[{"key","old","new"}]}); Java
// ignores it.
func (a *API) updateBrokerConfig(_ context.Context, req *route.Request) (*transport.Command, error) {
	if a.d.Settings == nil {
		return nil, errNoSettings
	}
	if len(req.Body) == 0 {
		return nil, fmt.Errorf("%w: %s needs a body of key=value lines", route.ErrBadHeader, transport.UpdateBrokerConfig)
	}
	a.settingsMu.Lock()
	changes, err := a.d.Settings.Update(string(req.Body))
	if err == nil && len(changes) > 0 {
		a.settingsUpdates++
		a.settingsSince = a.d.Replica.Now().UnixMilli()
	}
	a.settingsMu.Unlock()
	from := ""
	if req.Conn != nil {
		from = req.Conn.RemoteAddr()
	}
	if err != nil {
		a.log.Warn("broker config update refused", "from", from, "error", err)
		return nil, err // the tools name the broker they sent it to
	}
	for _, c := range changes {
		a.log.Info("broker config changed live (until restart; broker.conf unchanged)", "key", c.Key, "old", c.Old, "new", c.New, "from", from)
	}
	if changes == nil {
		changes = []SettingChange{}
	}
	body, err := json.Marshal(map[string]any{"changes": changes})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
