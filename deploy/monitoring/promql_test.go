package monitoring

import (
	"reflect"
	"strings"
	"testing"
)

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`rate(rocketmq_messages_in_total{topic="T", cluster=~"$cluster"}[5m])`, []string{"rocketmq_messages_in_total"}},
		{`sum by (cluster, broker_name) (rocketraft_raft_role{role="LEADER"}) == 0`, []string{"rocketraft_raft_role"}},
		{`sum(rate(a_total[1m])) without (node_id) / ignoring(le) group_left(x, y) b`, []string{"a_total", "b"}},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket[$__rate_interval])))`, []string{"h_bucket"}},
		{`max by (g) (x) - on (g) group_right y > bool 1e3`, []string{"x", "y"}},
		{`x offset 5m and y @ 1609746000 or z unless w`, []string{"w", "x", "y", "z"}},
		{`label_replace(m, "dst", "$1 by (x)", "src", "(.*)")`, []string{"m"}},
		{`{__name__="named_by_matcher", job="j"} + {__name__=~"regex_.*"}`, []string{"named_by_matcher"}},
		{`count(count by (topic) (x{topic!~"%RETRY%.*"})) > ${threshold}`, []string{"x"}},
		{`avg_over_time(x[10m:1m]) * -0.5 + .5 - 0x1f`, []string{"x"}},
		{"a # a comment naming b\n+ c", []string{"a", "c"}},
		{`topk(5, sum by(topic)(x)) and sum without(a)(y)`, []string{"x", "y"}},
		{`vector(1) + time()`, []string{}},
		{`count + sum and max`, []string{"count", "max", "sum"}}, // metrics that share an aggregation's name
	}
	for _, c := range cases {
		got, err := MetricNames(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("MetricNames(%s) = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestMetricNamesRejectsBrokenExpressions(t *testing.T) {
	for _, expr := range []string{`sum(x`, `x)`, `x{a="b"`, `x{a="b}`, `rate(x[5m)`, `"open`} {
		if names, err := MetricNames(expr); err == nil {
			t.Errorf("MetricNames(%s) = %v, want an error", expr, names)
		}
	}
}

func TestUnknown(t *testing.T) {
	exported := Exported(map[string]string{"h": "HISTOGRAM", "c_total": "COUNTER", "g": "GAUGE", "s": "SUMMARY"})
	for _, ok := range []string{`rate(h_bucket[5m])`, `h_sum / h_count`, `rate(c_total[1m]) + g`, `s{quantile="0.9"} + s_count`} {
		if u, err := Unknown(ok, exported); err != nil || len(u) != 0 {
			t.Errorf("%s: unknown %v %v", ok, u, err)
		}
	}
	for expr, want := range map[string]string{
		`rate(nope_total[5m])`: "nope_total",
		`h > 1`:                "h (a histogram",
		`g_count`:              "g_count (g is not a histogram)",
		`s_bucket`:             "s_bucket (s is not a histogram)",
	} {
		u, err := Unknown(expr, exported)
		if err != nil || len(u) != 1 || !strings.HasPrefix(u[0], want) {
			t.Errorf("Unknown(%s) = %v %v, want one starting %q", expr, u, err, want)
		}
	}
}
