package k8s

import (
	"fmt"
	"net"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rocketraft/rocketraft/config"
)

// clusterDomain is the DNS suffix of Services; the manifests assume the
// default (kubelet --cluster-domain).
const clusterDomain = "cluster.local"

// problems collects what is wrong, each naming the object and the value.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// image is who runs the containers: the Dockerfile's USER and the image tag.
type image struct {
	uid, gid int64
}

// check runs every rule over m; the pods must run as img's user.
func check(m *manifests, img image) problems {
	var p problems
	ns := checkNamespace(m, &p)
	nsAddr := checkNamesrv(m, ns, img, &p)
	names := map[string]string{}
	for _, sts := range m.statefulSets {
		brokerName := checkBrokerGroup(m, sts, ns, nsAddr, img, &p)
		if other, dup := names[brokerName]; dup && brokerName != "" {
			p.addf("StatefulSets %s and %s both run brokerName %s", other, sts.Name, brokerName)
		}
		names[brokerName] = sts.Name
	}
	if len(m.statefulSets) == 0 {
		p.addf("no broker StatefulSet")
	}
	return p
}

func checkNamespace(m *manifests, p *problems) string {
	if len(m.namespaces) != 1 {
		p.addf("want one Namespace, found %d", len(m.namespaces))
		return ""
	}
	ns := m.namespaces[0].Name
	for _, meta := range m.namespaced {
		if meta.Namespace != ns {
			p.addf("%s: namespace %q, want %q (the brokers' DNS names spell it)", meta.Name, meta.Namespace, ns)
		}
	}
	return ns
}

// checkNamesrv checks the nameserver Deployment and returns the address
// brokers must register with: its Service's DNS name and port.
func checkNamesrv(m *manifests, ns string, img image, p *problems) string {
	if len(m.deployments) != 1 {
		p.addf("want one nameserver Deployment, found %d", len(m.deployments))
		return ""
	}
	d := m.deployments[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		p.addf("Deployment %s: replicas must be 1: one Service in front of two nameservers splits the registrations", d.Name)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		p.addf("Deployment %s: strategy %q, want Recreate (a surge pod answers with an empty route table)", d.Name, d.Spec.Strategy.Type)
	}
	pod := &d.Spec.Template
	checkSelector(p, "Deployment "+d.Name, d.Spec.Selector.MatchLabels, pod.Labels)
	c, ok := onlyContainer(p, "Deployment "+d.Name, pod)
	if !ok {
		return ""
	}
	checkPodSecurity(p, "Deployment "+d.Name, pod, img, false)
	what := "Deployment " + d.Name
	if !slices.Equal(c.Command[:min(2, len(c.Command))], []string{"/usr/local/bin/rocketraft", "namesrv"}) {
		p.addf("%s: command %v does not run rocketraft namesrv", what, c.Command)
	}
	i := slices.Index(c.Command, "-c")
	if i < 0 || i+1 >= len(c.Command) {
		p.addf("%s: command %v has no -c <config>", what, c.Command)
		return ""
	}
	data, ok := mountedConfigMapFile(p, m, what, pod, c, c.Command[i+1])
	if !ok {
		return ""
	}
	cfg, err := config.ParseNamesrv([]byte(data), config.FormatProperties)
	if err != nil {
		p.addf("%s: %s: %v", what, c.Command[i+1], err)
		return ""
	}
	if cfg.ListenAddr != "" && !isWildcard(cfg.ListenAddr) {
		p.addf("%s: listenAddr=%s: the Service reaches the pod's address, so listen on 0.0.0.0", what, cfg.ListenAddr)
	}
	remoting := portNamed(p, what, c, "remoting", int32(cfg.ListenPort))
	admin := checkAdminListen(p, what, c, cfg.AdminListen)
	checkProbe(p, what, c, "readinessProbe", c.ReadinessProbe, "/readyz", admin)
	checkProbe(p, what, c, "livenessProbe", c.LivenessProbe, "/healthz", admin)
	checkScrapePort(p, what, pod, admin)

	for _, svc := range m.services {
		if svc.Spec.ClusterIP == corev1.ClusterIPNone || !selects(svc.Spec.Selector, pod.Labels) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if resolvePort(c, sp.TargetPort) == remoting && remoting != 0 {
				return net.JoinHostPort(fmt.Sprintf("%s.%s.svc.%s", svc.Name, ns, clusterDomain), strconv.Itoa(int(sp.Port)))
			}
		}
	}
	p.addf("%s: no ClusterIP Service forwards to its listenPort %d", what, cfg.ListenPort)
	return ""
}

// checkBrokerGroup checks one StatefulSet against the configs its pods load,
// and returns their brokerName.
func checkBrokerGroup(m *manifests, sts *appsv1.StatefulSet, ns, nsAddr string, img image, p *problems) string {
	what := "StatefulSet " + sts.Name
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	if replicas < 3 || replicas%2 == 0 {
		p.addf("%s: replicas %d, want an odd number of at least 3 (a raft quorum that survives a pod)", what, replicas)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		p.addf("%s: podManagementPolicy %q, want Parallel: OrderedReady waits for a Ready pod 0, which needs a leader, which needs two pods", what, sts.Spec.PodManagementPolicy)
	}
	if u := sts.Spec.UpdateStrategy; u.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		p.addf("%s: updateStrategy %q, want RollingUpdate", what, u.Type)
	} else if r := u.RollingUpdate; r != nil && (r.Partition != nil && *r.Partition != 0 || r.MaxUnavailable != nil && r.MaxUnavailable.IntValue() != 1) {
		p.addf("%s: rollingUpdate %+v: want every pod updated, one at a time", what, *r)
	}
	pod := &sts.Spec.Template
	checkSelector(p, what, sts.Spec.Selector.MatchLabels, pod.Labels)
	checkPodSecurity(p, what, pod, img, true)
	checkPDB(m, p, what, pod.Labels, replicas)

	headless, ok := m.services[sts.Spec.ServiceName]
	switch {
	case !ok:
		p.addf("%s: serviceName %q has no Service", what, sts.Spec.ServiceName)
	case headless.Spec.ClusterIP != corev1.ClusterIPNone:
		p.addf("Service %s: clusterIP %q, want None (headless: one DNS name per pod)", headless.Name, headless.Spec.ClusterIP)
	case !headless.Spec.PublishNotReadyAddresses:
		p.addf("Service %s: publishNotReadyAddresses false: raft peers must resolve before they are Ready", headless.Name)
	case !selects(headless.Spec.Selector, pod.Labels):
		p.addf("Service %s: selector %v does not select the pods of %s", headless.Name, headless.Spec.Selector, what)
	}

	c, ok := onlyContainer(p, what, pod)
	if !ok {
		return ""
	}
	if headless != nil {
		raft, _ := containerPort(c, "raft")
		servesRaft := false
		for _, sp := range headless.Spec.Ports {
			n := resolvePort(c, sp.TargetPort)
			if n == 0 {
				p.addf("Service %s: port %s targets %s, which the pods do not declare", headless.Name, sp.Name, sp.TargetPort.String())
			}
			servesRaft = servesRaft || n == raft && sp.Port == raft
		}
		if !servesRaft {
			p.addf("Service %s: no port %d onto the raft port: peers dial <pod>.%s:%d", headless.Name, raft, headless.Name, raft)
		}
	}
	dir, ok := perPodConfigDir(p, what, c)
	if !ok {
		return ""
	}
	dataMount := ""
	for _, vm := range c.VolumeMounts {
		for _, t := range sts.Spec.VolumeClaimTemplates {
			if vm.Name == t.Name {
				dataMount = vm.MountPath
			}
		}
	}
	if dataMount == "" {
		p.addf("%s: no volumeClaimTemplate is mounted: the CommitLog would die with the pod", what)
	}

	var ref config.Broker // the first config that loaded, without its per-pod keys
	var refFile string
	for i := range replicas {
		podName := fmt.Sprintf("%s-%d", sts.Name, i)
		file := path.Join(dir, podName+".conf")
		data, ok := mountedConfigMapFile(p, m, what, pod, c, file)
		if !ok {
			continue
		}
		cfg, err := config.ParseBroker([]byte(data), config.FormatProperties)
		if err != nil {
			p.addf("%s: %s: %v", what, file, err)
			continue
		}
		where := fmt.Sprintf("%s %s", what, file)
		fqdn := func(ordinal int) string {
			return fmt.Sprintf("%s-%d.%s.%s.svc.%s", sts.Name, ordinal, sts.Spec.ServiceName, ns, clusterDomain)
		}
		if cfg.BrokerIP1 != fqdn(int(i)) {
			p.addf("%s: brokerIP1=%s, want the pod's DNS name %s", where, cfg.BrokerIP1, fqdn(int(i)))
		}
		listen := portNamed(p, where, c, "remoting", int32(cfg.ListenPort))
		portNamed(p, where, c, "vip", int32(cfg.VIPPort()))
		admin := checkAdminListen(p, where, c, cfg.AdminListen)
		if refFile == "" {
			checkProbe(p, what, c, "readinessProbe", c.ReadinessProbe, "/readyz", admin)
			checkProbe(p, what, c, "livenessProbe", c.LivenessProbe, "/healthz", admin)
			checkProbe(p, what, c, "startupProbe", c.StartupProbe, "/healthz", admin)
			checkScrapePort(p, what, pod, admin)
		}
		raftPort, _ := containerPort(c, "raft")
		if len(cfg.Peers) != int(replicas) {
			p.addf("%s: dLegerPeers lists %d members, the StatefulSet runs %d", where, len(cfg.Peers), replicas)
		}
		for k, peer := range cfg.Peers {
			if want := net.JoinHostPort(fqdn(k), strconv.Itoa(int(raftPort))); peer.Addr != want {
				p.addf("%s: dLegerPeers member %d (%s) is %s, want %s (pod %s-%d, container port raft)", where, k, peer.ID, peer.Addr, want, sts.Name, k)
			}
			if k < len(cfg.PeerClientAddrs) {
				ca := cfg.PeerClientAddrs[k]
				if want := net.JoinHostPort(fqdn(k), strconv.Itoa(int(listen))); ca.ID != peer.ID || ca.Addr != want {
					p.addf("%s: dLegerPeerClientAddrs member %d is %s-%s, want %s-%s", where, k, ca.ID, ca.Addr, peer.ID, want)
				}
			}
		}
		if len(cfg.PeerClientAddrs) != len(cfg.Peers) {
			p.addf("%s: dLegerPeerClientAddrs lists %d members, dLegerPeers %d: followers could not forward to every leader", where, len(cfg.PeerClientAddrs), len(cfg.Peers))
		}
		if _, idx, err := cfg.Self(); err != nil || idx != int(i) {
			p.addf("%s: dLegerSelfId=%s is member %d of dLegerPeers, want member %d (the pod's ordinal)", where, cfg.SelfID, idx, i)
		}
		if cfg.Join {
			p.addf("%s: dLegerJoin=true: the initial members bootstrap the group", where)
		}
		if cfg.StorePathRootDir != dataMount {
			p.addf("%s: storePathRootDir=%s, but the persistent volume is mounted at %q", where, cfg.StorePathRootDir, dataMount)
		}
		if nsAddr != "" && !slices.Equal(cfg.NamesrvAddrs, []string{nsAddr}) {
			p.addf("%s: namesrvAddr=%v, want the nameserver Service %s", where, cfg.NamesrvAddrs, nsAddr)
		}
		// The pods' configs differ in brokerIP1 and dLegerSelfId only.
		cfg.BrokerIP1, cfg.SelfID = "", ""
		if refFile == "" {
			ref, refFile = cfg, file
		} else if !reflect.DeepEqual(cfg, ref) {
			p.addf("%s: differs from %s in more than brokerIP1 and dLegerSelfId", where, path.Base(refFile))
		}
	}
	checkUnusedConfigs(p, m, what, pod, c, dir, sts.Name, replicas)
	return ref.BrokerName
}

// perPodConfigDir finds the "-c <dir>/${VAR}.conf" of the container's shell
// command and checks that VAR is the pod's name from the downward API.
func perPodConfigDir(p *problems, what string, c *corev1.Container) (string, bool) {
	re := regexp.MustCompile(`(?:^|\s)exec /usr/local/bin/rocketraft broker -c (\S+)/\$\{(\w+)\}\.conf(?:\s|$)`)
	if len(c.Command) != 3 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" {
		p.addf("%s: command %v: want /bin/sh -c \"exec /usr/local/bin/rocketraft broker -c <dir>/${POD_NAME}.conf\"", what, c.Command)
		return "", false
	}
	sub := re.FindStringSubmatch(c.Command[2])
	if sub == nil {
		p.addf("%s: command %q does not pick its config by pod name (-c <dir>/${POD_NAME}.conf)", what, c.Command[2])
		return "", false
	}
	for _, e := range c.Env {
		if e.Name == sub[2] {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
				p.addf("%s: env %s is not the pod's metadata.name", what, e.Name)
				return "", false
			}
			return sub[1], true
		}
	}
	p.addf("%s: command uses ${%s}, which env does not set", what, sub[2])
	return "", false
}

// checkUnusedConfigs flags ConfigMap keys no pod reads: a config for an
// ordinal the StatefulSet does not run is a sign the two drifted apart.
func checkUnusedConfigs(p *problems, m *manifests, what string, pod *corev1.PodTemplateSpec, c *corev1.Container, dir, sts string, replicas int32) {
	cm := configMapAt(m, pod, c, dir)
	if cm == nil {
		return
	}
	for key := range cm.Data {
		ok := false
		for i := range replicas {
			ok = ok || key == fmt.Sprintf("%s-%d.conf", sts, i)
		}
		if !ok {
			p.addf("%s: ConfigMap %s key %s is read by no pod (replicas %d)", what, cm.Name, key, replicas)
		}
	}
}

func checkPDB(m *manifests, p *problems, what string, labels map[string]string, replicas int32) {
	quorum := replicas/2 + 1
	found := 0
	for _, pdb := range m.pdbs {
		if pdb.Spec.Selector == nil || !selects(pdb.Spec.Selector.MatchLabels, labels) {
			continue
		}
		found++
		switch {
		case pdb.Spec.MaxUnavailable != nil:
			n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(replicas), true)
			if err != nil || n < 1 || replicas-int32(n) < quorum {
				p.addf("PodDisruptionBudget %s: maxUnavailable %s of %d pods: want at least 1 and at most %d, so a quorum of %d stays up",
					pdb.Name, pdb.Spec.MaxUnavailable.String(), replicas, replicas-quorum, quorum)
			}
		case pdb.Spec.MinAvailable != nil:
			n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(replicas), true)
			if err != nil || int32(n) < quorum || int32(n) >= replicas {
				p.addf("PodDisruptionBudget %s: minAvailable %s of %d pods: want the quorum %d, and less than all so nodes can drain",
					pdb.Name, pdb.Spec.MinAvailable.String(), replicas, quorum)
			}
		default:
			p.addf("PodDisruptionBudget %s: neither maxUnavailable nor minAvailable", pdb.Name)
		}
	}
	if found != 1 {
		p.addf("%s: %d PodDisruptionBudgets select its pods, want one keeping the quorum", what, found)
	}
}
