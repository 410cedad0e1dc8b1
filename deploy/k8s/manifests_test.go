package k8s

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// dockerImage reads the uid and gid the image runs as from docker/Dockerfile.
func dockerImage(t *testing.T) image {
	t.Helper()
	b, err := os.ReadFile("../../docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+):(\d+)\s*$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("docker/Dockerfile: no numeric USER uid:gid")
	}
	uid, _ := strconv.ParseInt(m[1], 10, 64)
	gid, _ := strconv.ParseInt(m[2], 10, 64)
	return image{uid: uid, gid: gid}
}

func mustLoad(t *testing.T) *manifests {
	t.Helper()
	m, err := loadManifests(".")
	if err != nil {
		t.Fatalf("manifests: %v", err)
	}
	return m
}

// TestManifestsDecodeStrictly: every document is a known kind that decodes
// into its API type without an unknown field.
func TestManifestsDecodeStrictly(t *testing.T) {
	m := mustLoad(t)
	if len(m.namespaces) != 1 || len(m.deployments) != 1 || len(m.statefulSets) == 0 || len(m.pdbs) != len(m.statefulSets) {
		t.Fatalf("decoded %d namespaces, %d deployments, %d statefulsets, %d pdbs; want 1, 1, ≥1 and one PDB per StatefulSet",
			len(m.namespaces), len(m.deployments), len(m.statefulSets), len(m.pdbs))
	}
}

// TestManifestsAgreeWithConfig runs every rule of check_test.go.
func TestManifestsAgreeWithConfig(t *testing.T) {
	for _, p := range check(mustLoad(t), dockerImage(t)) {
		t.Error(p)
	}
}

func TestStrictDecodeRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replica: 3}\n", `unknown field "spec.replica"`},
		{"duplicate field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIP: None, clusterIP: \"\"}\n", "clusterIP"},
		{"wrong type", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: three}\n", "replicas"},
		{"misspelt probe", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers: [{name: c, readinessprobe: {}}]\n", "readinessprobe"},
		{"old apiVersion", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n", `want "policy/v1"`},
		{"unknown kind", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", `kind "Secret"`},
		{"no name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "without metadata.name"},
	} {
		m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, services: map[string]*corev1.Service{}}
		err := m.add([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, services: map[string]*corev1.Service{}}
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	if err := m.add(doc); err != nil {
		t.Fatal(err)
	}
	if err := m.add(doc); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Errorf("a second ConfigMap x: err = %v, want defined twice", err)
	}
}

// TestChecksCatchMistakes breaks a copy of the manifests one way at a time;
// each mistake must be reported, naming what is wrong.
func TestChecksCatchMistakes(t *testing.T) {
	sts := func(m *manifests) *appsv1.StatefulSet { return m.statefulSets[0] }
	conf := func(m *manifests, i int, old, repl string) {
		s := sts(m)
		cm := m.configMaps[s.Name]
		key := s.Name + "-" + strconv.Itoa(i) + ".conf"
		if !strings.Contains(cm.Data[key], old) {
			t.Fatalf("%s has no %q to replace", key, old)
		}
		cm.Data[key] = strings.Replace(cm.Data[key], old, repl, 1)
	}
	for _, tc := range []struct {
		name    string
		mistake func(m *manifests)
		want    string
	}{
		{"peer names the wrong pod", func(m *manifests) { conf(m, 1, "n2-broker-a-2.", "n2-broker-a-3.") }, "dLegerPeers member 2"},
		{"self id is another ordinal", func(m *manifests) { conf(m, 2, "dLegerSelfId=n2", "dLegerSelfId=n0") }, "dLegerSelfId=n0 is member 0"},
		{"brokerIP1 of another pod", func(m *manifests) { conf(m, 0, "brokerIP1=broker-a-0.", "brokerIP1=broker-a-1.") }, "want the pod's DNS name"},
		{"admin on loopback", func(m *manifests) { conf(m, 1, "adminListen=0.0.0.0:", "adminListen=127.0.0.1:") }, "adminListen=127.0.0.1"},
		{"configs drift", func(m *manifests) { conf(m, 2, "logLevel=info", "logLevel=debug") }, "differs from broker-a-0.conf"},
		{"namesrvAddr elsewhere", func(m *manifests) { conf(m, 0, "namesrvAddr=namesrv.", "namesrvAddr=nameserver.") }, "want the nameserver Service"},
		{"raft port drift", func(m *manifests) {
			c := &sts(m).Spec.Template.Spec.Containers[0]
			for i := range c.Ports {
				if c.Ports[i].Name == "raft" {
					c.Ports[i].ContainerPort++
				}
			}
		}, "container port raft"},
		{"no VIP channel port", func(m *manifests) {
			c := &sts(m).Spec.Template.Spec.Containers[0]
			for i := range c.Ports {
				if c.Ports[i].Name == "vip" {
					c.Ports[i].ContainerPort = 10910
				}
			}
		}, `container port "vip" is 10910, the config listens on 10909`},
		{"readiness on /healthz", func(m *manifests) { sts(m).Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "/healthz" }, "readinessProbe path /healthz, want /readyz"},
		{"liveness on the client port", func(m *manifests) {
			sts(m).Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Port = intstr.FromString("remoting")
		}, "livenessProbe port remoting"},
		{"no startup probe", func(m *manifests) { sts(m).Spec.Template.Spec.Containers[0].StartupProbe = nil }, "no HTTP startupProbe"},
		{"OrderedReady", func(m *manifests) { sts(m).Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement }, "want Parallel"},
		{"OnDelete", func(m *manifests) { sts(m).Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }, "want RollingUpdate"},
		{"more replicas than configs", func(m *manifests) { r := int32(5); sts(m).Spec.Replicas = &r }, "has no key broker-a-3.conf"},
		{"even replicas", func(m *manifests) { r := int32(2); sts(m).Spec.Replicas = &r }, "replicas 2"},
		{"not headless", func(m *manifests) { m.services[sts(m).Spec.ServiceName].Spec.ClusterIP = "" }, "want None"},
		{"headless port onto nothing", func(m *manifests) {
			m.services[sts(m).Spec.ServiceName].Spec.Ports[0].TargetPort = intstr.FromString("client")
		}, "targets client, which the pods do not declare"},
		{"not-ready pods unnamed", func(m *manifests) { m.services[sts(m).Spec.ServiceName].Spec.PublishNotReadyAddresses = false }, "publishNotReadyAddresses"},
		{"PDB loses the quorum", func(m *manifests) { v := intstr.FromInt32(2); m.pdbs[0].Spec.MaxUnavailable = &v }, "so a quorum of 2 stays up"},
		{"PDB blocks every drain", func(m *manifests) { v := intstr.FromInt32(0); m.pdbs[0].Spec.MaxUnavailable = &v }, "want at least 1"},
		{"PDB selects nothing", func(m *manifests) { m.pdbs[0].Spec.Selector.MatchLabels["app.kubernetes.io/instance"] = "broker-z" }, "0 PodDisruptionBudgets"},
		{"volume not mounted", func(m *manifests) { sts(m).Spec.VolumeClaimTemplates[0].Name = "other" }, "no volumeClaimTemplate is mounted"},
		{"wrong uid", func(m *manifests) { u := int64(0); sts(m).Spec.Template.Spec.SecurityContext.RunAsUser = &u }, "want the Dockerfile's USER"},
		{"config not by pod name", func(m *manifests) {
			c := &sts(m).Spec.Template.Spec.Containers[0]
			c.Command[2] = strings.Replace(c.Command[2], "${POD_NAME}", "${HOST}", 1)
		}, "${HOST}, which env does not set"},
		{"namesrv scaled out", func(m *manifests) { r := int32(2); m.deployments[0].Spec.Replicas = &r }, "replicas must be 1"},
		{"namesrv probe elsewhere", func(m *manifests) {
			m.deployments[0].Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(9999)
		}, "readinessProbe port 9999"},
		{"namesrv admin on loopback", func(m *manifests) {
			cm := m.configMaps["namesrv"]
			cm.Data["namesrv.conf"] = strings.Replace(cm.Data["namesrv.conf"], "adminListen=0.0.0.0:", "adminListen=127.0.0.1:", 1)
		}, "adminListen=127.0.0.1"},
		{"wrong namespace", func(m *manifests) { m.namespaced[0].Namespace = "default" }, `namespace "default"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustLoad(t)
			tc.mistake(m)
			got := check(m, dockerImage(t))
			for _, p := range got {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Errorf("no problem containing %q; got %q", tc.want, got)
		})
	}
}
