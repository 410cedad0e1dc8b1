package nameserver

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rocketraft/rocketraft/transport"
)

// serverMetrics is the nameserver's own Prometheus registry (never the global
// one, so a test process can run several): request counts, and gauges read from
// the Registry at scrape time.
type serverMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec // request_code, response_code
}

// nodeTypeNameserver is the node_type of every nameserver series (brokers say
// "broker", as RocketMQ 5 does).
const nodeTypeNameserver = "nameserver"

var (
	descBrokers = prometheus.NewDesc("rocketraft_namesrv_brokers",
		"Live broker registrations (one per node of every group).", nil, nil)
	descGroups = prometheus.NewDesc("rocketraft_namesrv_broker_groups",
		"Registered broker groups (brokerNames), by cluster.", []string{"cluster"}, nil)
	descNoMaster = prometheus.NewDesc("rocketraft_namesrv_broker_groups_without_master",
		"Registered broker groups with no brokerId 0 (no leader registered): clients cannot send to them.", []string{"cluster"}, nil)
	descTopics = prometheus.NewDesc("rocketraft_namesrv_topics", "Topics with route data.", nil, nil)
)

// registryCollector reads the route table once per scrape.
type registryCollector struct{ reg *Registry }

func (c registryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBrokers, descGroups, descNoMaster, descTopics} {
		ch <- d
	}
}

func (c registryCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descBrokers, float64(c.reg.LiveCount()))
	gauge(descTopics, float64(len(c.reg.TopicList())))
	groups, noMaster := map[string]int{}, map[string]int{}
	for _, bd := range c.reg.ClusterInfo().BrokerAddrTable {
		groups[bd.Cluster]++
		if _, ok := bd.BrokerAddrs[MasterID]; !ok {
			noMaster[bd.Cluster]++
		}
	}
	for cluster, n := range groups {
		gauge(descGroups, float64(n), cluster)
		gauge(descNoMaster, float64(noMaster[cluster]), cluster)
	}
}

func newServerMetrics(reg *Registry) *serverMetrics {
	m := &serverMetrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rocketraft_namesrv_requests_total",
		Help: "Requests served, by request code and response code (RocketMQ's constant names in lower case).",
	}, []string{"request_code", "response_code"})
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"node_type": nodeTypeNameserver}, m.reg)
	wrapped.MustRegister(m.requests, registryCollector{reg})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// codeName is a code as a label: RocketMQ's constant name in lower case
// ("GET_ROUTEINFO_BY_TOPIC(105)" → "get_routeinfo_by_topic"); codes the tables
// do not know are "other", so a client cannot grow the label set.
func codeName(s string) string {
	if strings.HasPrefix(s, "UNKNOWN") {
		return "other"
	}
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

func (m *serverMetrics) observe(req transport.RequestCode, resp *transport.Command) {
	code := "none"
	if resp != nil {
		code = codeName(resp.ResponseCode().String())
	}
	m.requests.WithLabelValues(codeName(req.String()), code).Inc()
}
