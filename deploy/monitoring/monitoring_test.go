package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// ruleFile is Prometheus' rule file format; unknown keys fail the decode.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// namedExpr is one PromQL expression and where it is written.
type namedExpr struct{ where, expr string }

func loadAlerts(t *testing.T) (ruleFile, []namedExpr) {
	t.Helper()
	data, err := os.ReadFile("alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	var exprs []namedExpr
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, namedExpr{"alerts.yaml " + g.Name + "/" + r.Alert, r.Expr})
		}
	}
	return rf, exprs
}

// labelValues is a Grafana query variable's label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)$`)

// loadDashboard returns the dashboard and every expression in it: each
// panel target's expr (rows nest panels) and each query variable's selector.
func loadDashboard(t *testing.T) (map[string]any, []namedExpr) {
	t.Helper()
	data, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var exprs []namedExpr
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if title, ok := v["title"].(string); ok {
				where = "dashboard.json " + strconv.Quote(title)
			}
			if e, ok := v["expr"].(string); ok {
				exprs = append(exprs, namedExpr{where, e})
			}
			for k, c := range v {
				if k != "templating" {
					walk(where, c)
				}
			}
		case []any:
			for _, c := range v {
				walk(where, c)
			}
		}
	}
	walk("dashboard.json", dash["panels"])
	templating, _ := dash["templating"].(map[string]any)
	vars, _ := templating["list"].([]any)
	for _, v := range vars {
		v, _ := v.(map[string]any)
		if v["type"] != "query" {
			continue
		}
		q, _ := v["query"].(map[string]any)
		query, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(query)
		if m == nil {
			t.Errorf("dashboard variable %v: query %q is not label_values(selector, label)", v["name"], query)
			continue
		}
		exprs = append(exprs, namedExpr{fmt.Sprintf("dashboard.json variable %v", v["name"]), m[1]})
	}
	return dash, exprs
}

// gatherTypes adds every family g gathers to types (name → metric type).
func gatherTypes(t *testing.T, g prometheus.Gatherer, types map[string]string) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		types[f.GetName()] = f.GetType().String()
	}
}

// realRegistries starts a group, runs a little of everything the dashboard
// shows (sends through a follower, a consumer that pulls and commits), and
// returns a function that gathers every broker's and the nameserver's
// registry.
func realRegistries(t *testing.T) func() map[string]bool {
	t.Helper()
	g := startGroup(t)
	leader, follower := g.leader(), g.follower()
	g.raft.CreateTopic("Watched", 1)
	g.heartbeat(leader, "G_watched", "Watched")
	for i := range 4 {
		n := leader
		if i%2 == 1 {
			n = follower
		}
		g.mustCall(n, transport.SendMessage, sendExt("Watched", 0, props(store.PropertyKeys, strconv.Itoa(i))), []byte("watched"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(g.pull(leader, "G_watched", "Watched", 0, 0, 1)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing to pull")
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.commit(leader, "G_watched", "Watched", 0, 1)
	return func() map[string]bool {
		types := map[string]string{}
		for _, n := range g.nodes {
			gatherTypes(t, n.m.Registry(), types)
		}
		gatherTypes(t, g.ns.Metrics(), types)
		return Exported(types)
	}
}

// raftSchedule bounds the wait for the series raft reports on its own
// schedule (its heartbeat timings start some hundred milliseconds after an
// election).
const raftSchedule = 10 * time.Second

// problems lists every expression that does not scan or names a metric
// exported lacks.
func problems(exprs []namedExpr, exported map[string]bool) []string {
	var out []string
	for _, e := range exprs {
		unknown, err := Unknown(e.expr, exported)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", e.where, err))
			continue
		}
		for _, u := range unknown {
			out = append(out, fmt.Sprintf("%s: %s is not exported by any broker or nameserver\n\t%s", e.where, u, e.expr))
		}
	}
	return out
}

// TestDashboardAndAlertsNameExportedMetrics: every metric named by an alert
// rule or a dashboard panel or variable is one that a real broker or
// nameserver registry exports; a renamed metric fails here, not on a pager.
func TestDashboardAndAlertsNameExportedMetrics(t *testing.T) {
	_, alertExprs := loadAlerts(t)
	_, dashExprs := loadDashboard(t)
	if len(alertExprs) < 6 || len(dashExprs) < 20 {
		t.Fatalf("found %d alert and %d dashboard expressions; the loaders are missing some", len(alertExprs), len(dashExprs))
	}
	gather := realRegistries(t)
	exported := gather()
	for deadline := time.Now().Add(raftSchedule); len(problems(append(alertExprs, dashExprs...), exported)) > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		exported = gather()
	}
	for _, p := range problems(append(alertExprs, dashExprs...), exported) {
		t.Error(p)
	}

	t.Run("an expression naming an unknown metric fails", func(t *testing.T) {
		bad := []namedExpr{
			{"typo", `sum by (topic) (rate(rocketmq_messages_in_totl[5m]))`},
			{"old camelCase raft name", `rocketraft_raft_commitTime{quantile="0.99"} > 100`},
			{"histogram without suffix", `histogram_quantile(0.99, rate(rocketraft_store_flush_duration_seconds[5m]))`},
			{"unbalanced", `sum(rocketraft_raft_term`},
		}
		got := problems(bad, exported)
		if len(got) != len(bad) {
			t.Fatalf("%d problems for %d bad expressions: %q", len(got), len(bad), got)
		}
		for i, want := range []string{"rocketmq_messages_in_totl", "rocketraft_raft_commitTime", "rocketraft_store_flush_duration_seconds (a histogram", "unclosed"} {
			if !strings.Contains(got[i], want) {
				t.Errorf("problem %q does not name %q", got[i], want)
			}
		}
		good := []namedExpr{{"good", `sum by (topic) (rate(rocketmq_messages_in_total[5m])) > bool on() group_left max(rocketraft_raft_term)`}}
		if p := problems(good, exported); len(p) != 0 {
			t.Errorf("a valid expression got %q", p)
		}
	})
}

// TestAlertRulesAreComplete: the rule file is Prometheus' format, every rule
// has what Alertmanager routes on and a human reads, and issue 13's alerts
// exist.
func TestAlertRulesAreComplete(t *testing.T) {
	rf, _ := loadAlerts(t)
	seen := map[string]bool{}
	for _, g := range rf.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: needs a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if !regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`).MatchString(r.Alert) || seen[r.Alert] {
				t.Errorf("alert %q: want a unique CamelCase name", r.Alert)
			}
			seen[r.Alert] = true
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: empty expr", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: needs a summary and a description", r.Alert)
			}
		}
	}
	for _, want := range []string{"RocketraftGroupWithoutLeader", "RocketraftTermChurn", "RocketraftFollowerLagging",
		"RocketraftFsyncSlow", "RocketraftDiskNearlyFull", "RocketmqConsumerLagGrowing"} {
		if !seen[want] {
			t.Errorf("alerts.yaml lacks %s", want)
		}
	}
}

// TestDashboardShape: panels Grafana can place and query: unique ids, a grid
// position, a title, and the dashboard's data source variable.
func TestDashboardShape(t *testing.T) {
	dash, _ := loadDashboard(t)
	if dash["uid"] == "" || dash["title"] == "" {
		t.Error("dashboard needs a uid and a title")
	}
	panels, _ := dash["panels"].([]any)
	ids := map[float64]bool{}
	for _, p := range panels {
		p, _ := p.(map[string]any)
		title, _ := p["title"].(string)
		id, _ := p["id"].(float64)
		if title == "" || id == 0 || ids[id] {
			t.Errorf("panel %v: needs a title and a unique id", p["title"])
		}
		ids[id] = true
		if _, ok := p["gridPos"].(map[string]any); !ok {
			t.Errorf("panel %q: no gridPos", title)
		}
		if p["type"] == "row" {
			continue
		}
		ds, _ := p["datasource"].(map[string]any)
		targets, _ := p["targets"].([]any)
		if ds["uid"] != "${datasource}" || len(targets) == 0 {
			t.Errorf("panel %q: want datasource ${datasource} and at least one target", title)
		}
	}
}
