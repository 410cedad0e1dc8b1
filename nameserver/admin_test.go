package nameserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rocketraft/rocketraft/transport"
)

// scrape parses srv's /metrics as Prometheus text.
func scrape(t *testing.T, url string) map[string]*familyValues {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	out := map[string]*familyValues{}
	for name, f := range families {
		fv := &familyValues{}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			fv.series = append(fv.series, series{labels, v})
		}
		out[name] = fv
	}
	return out
}

type series struct {
	labels map[string]string
	value  float64
}

type familyValues struct{ series []series }

// value is the one series whose labels include want; ok false if none or many.
func (f *familyValues) value(want map[string]string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	var found []float64
	for _, s := range f.series {
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			found = append(found, s.value)
		}
	}
	if len(found) != 1 {
		return 0, false
	}
	return found[0], true
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAdminHandler: /healthz, /readyz around Start and Close, and /metrics
// counting registered brokers, groups without a master, topics and requests.
func TestAdminHandler(t *testing.T) {
	s := New(Config{ListenAddr: "127.0.0.1:0"}, nil)
	h := httptest.NewServer(s.AdminHandler())
	defer h.Close()
	if code, _ := get(t, h.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before Start = %d, want 503", code)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if code, body := get(t, h.URL+"/readyz"); code != 200 || !strings.Contains(body, s.Addr()) {
		t.Errorf("/readyz after Start = %d %q", code, body)
	}
	if code, body := get(t, h.URL+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}

	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	for _, r := range []RegisterRequest{
		reg("broker-a", "127.0.0.1:10911", MasterID, 3, 0, "T1", "T2"),
		reg("broker-a", "127.0.0.1:10921", 2, 3, 0),
		reg("broker-b", "127.0.0.1:11921", 2, 1, 0), // a group whose leader has not registered
	} {
		if _, err := c.RegisterBroker(ctx, s.Addr(), r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetRoute(ctx, s.Addr(), "T1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetRoute(ctx, s.Addr(), "Missing"); err == nil {
		t.Fatal("route of a missing topic")
	}
	tc := newTransportClient(t)
	if _, err := tc.Invoke(ctx, s.Addr(), transport.NewRequest(transport.RequestCode(9999), nil, nil)); err != nil {
		t.Fatal(err)
	}

	m := scrape(t, h.URL)
	ns := map[string]string{"node_type": "nameserver"}
	cluster := map[string]string{"node_type": "nameserver", "cluster": "DefaultCluster"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"rocketraft_namesrv_brokers", ns, 3},
		{"rocketraft_namesrv_topics", ns, 2},
		{"rocketraft_namesrv_broker_groups", cluster, 2},
		{"rocketraft_namesrv_broker_groups_without_master", cluster, 1},
		{"rocketraft_namesrv_requests_total", map[string]string{"request_code": "register_broker", "response_code": "success"}, 3},
		{"rocketraft_namesrv_requests_total", map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "success"}, 1},
		{"rocketraft_namesrv_requests_total", map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "topic_not_exist"}, 1},
		{"rocketraft_namesrv_requests_total", map[string]string{"request_code": "other", "response_code": "request_code_not_supported"}, 1},
	} {
		if got, ok := m[c.name].value(c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := m["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, h.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after Close = %d, want 503", code)
	}
}
