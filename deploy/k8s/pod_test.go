package k8s

import (
	"net"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func checkSelector(p *problems, what string, selector, labels map[string]string) {
	if !selects(selector, labels) {
		p.addf("%s: selector %v does not match its pod labels %v", what, selector, labels)
	}
}

func onlyContainer(p *problems, what string, pod *corev1.PodTemplateSpec) (*corev1.Container, bool) {
	if n := len(pod.Spec.Containers); n != 1 {
		p.addf("%s: %d containers, want one", what, n)
		return nil, false
	}
	return &pod.Spec.Containers[0], true
}

// checkPodSecurity: the pod runs as the image's user (a numeric uid, so
// runAsNonRoot can be verified), and a pod with a volume owns it via fsGroup.
func checkPodSecurity(p *problems, what string, pod *corev1.PodTemplateSpec, img image, hasVolume bool) {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		p.addf("%s: securityContext.runAsNonRoot must be true", what)
		return
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != img.uid || sc.RunAsGroup == nil || *sc.RunAsGroup != img.gid {
		p.addf("%s: runAsUser/runAsGroup %v/%v, want the Dockerfile's USER %d:%d", what, deref(sc.RunAsUser), deref(sc.RunAsGroup), img.uid, img.gid)
	}
	if hasVolume && (sc.FSGroup == nil || *sc.FSGroup != img.gid) {
		p.addf("%s: fsGroup %v, want %d so the persistent volume is writable by the image's user", what, deref(sc.FSGroup), img.gid)
	}
	for _, c := range pod.Spec.Containers {
		if strings.HasSuffix(c.Image, ":latest") && c.ImagePullPolicy != corev1.PullIfNotPresent && c.ImagePullPolicy != corev1.PullNever {
			p.addf("%s: image %s with imagePullPolicy %q: :latest defaults to Always, which fails for a locally loaded image", what, c.Image, c.ImagePullPolicy)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// configMapAt is the ConfigMap mounted at dir in container c.
func configMapAt(m *manifests, pod *corev1.PodTemplateSpec, c *corev1.Container, dir string) *corev1.ConfigMap {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath != dir {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && len(v.ConfigMap.Items) == 0 {
				return m.configMaps[v.ConfigMap.Name]
			}
		}
	}
	return nil
}

// mountedConfigMapFile is the content of file as container c sees it: a key
// of the ConfigMap mounted at its directory.
func mountedConfigMapFile(p *problems, m *manifests, what string, pod *corev1.PodTemplateSpec, c *corev1.Container, file string) (string, bool) {
	cm := configMapAt(m, pod, c, path.Dir(file))
	if cm == nil {
		p.addf("%s: %s is not in a ConfigMap mounted (whole, no items) at %s", what, file, path.Dir(file))
		return "", false
	}
	data, ok := cm.Data[path.Base(file)]
	if !ok {
		p.addf("%s: %s: ConfigMap %s has no key %s", what, file, cm.Name, path.Base(file))
		return "", false
	}
	return data, true
}

func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

func containerPort(c *corev1.Container, name string) (int32, bool) {
	for _, cp := range c.Ports {
		if cp.Name == name {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// portNamed checks that c declares port name with number want, and returns want.
func portNamed(p *problems, what string, c *corev1.Container, name string, want int32) int32 {
	got, ok := containerPort(c, name)
	if !ok || got != want {
		p.addf("%s: container port %q is %d, the config listens on %d", what, name, got, want)
	}
	return want
}

// resolvePort is the number a probe or Service targetPort means in c.
func resolvePort(c *corev1.Container, port intstr.IntOrString) int32 {
	if port.Type == intstr.Int {
		return port.IntVal
	}
	n, _ := containerPort(c, port.StrVal)
	return n
}

// checkAdminListen: the kubelet probes the pod's address, so adminListen must
// not be loopback, and its port is container port "admin". Returns the port.
func checkAdminListen(p *problems, what string, c *corev1.Container, adminListen string) int32 {
	host, portText, err := net.SplitHostPort(adminListen)
	if err != nil {
		p.addf("%s: adminListen=%q: probes need the HTTP listener (%v)", what, adminListen, err)
		return 0
	}
	if !isWildcard(host) {
		p.addf("%s: adminListen=%s: the kubelet's probes reach the pod's address, not %s; listen on 0.0.0.0", what, adminListen, host)
	}
	n, _ := strconv.Atoi(portText)
	return portNamed(p, what+" adminListen", c, "admin", int32(n))
}

func checkProbe(p *problems, what string, c *corev1.Container, kind string, probe *corev1.Probe, wantPath string, adminPort int32) {
	if probe == nil || probe.HTTPGet == nil {
		p.addf("%s: no HTTP %s (want GET %s on adminListen's port %d)", what, kind, wantPath, adminPort)
		return
	}
	if probe.HTTPGet.Path != wantPath {
		p.addf("%s: %s path %s, want %s", what, kind, probe.HTTPGet.Path, wantPath)
	}
	if got := resolvePort(c, probe.HTTPGet.Port); got != adminPort || adminPort == 0 {
		p.addf("%s: %s port %s (%d), want adminListen's port %d", what, kind, probe.HTTPGet.Port.String(), got, adminPort)
	}
}

// checkScrapePort: a prometheus.io/port annotation names adminListen's port.
func checkScrapePort(p *problems, what string, pod *corev1.PodTemplateSpec, adminPort int32) {
	if v, ok := pod.Annotations["prometheus.io/port"]; ok && v != strconv.Itoa(int(adminPort)) {
		p.addf("%s: prometheus.io/port %s, but /metrics is on adminListen's port %d", what, v, adminPort)
	}
}
