package docker

// The findings of issue 13 about these files, one test each: the build context,
// one image built once, admin ports on loopback, health checks that wait for
// start-up.

import (
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dockerignore is the root's .dockerignore: the build context is the
// repository root (compose's build.context "..", docker build ... .).
const dockerignore = "../.dockerignore"

// ignorePatterns reads .dockerignore: one pattern a line, # comments, blank
// lines skipped, leading and trailing slashes dropped (the context root is
// implied), as Docker reads it.
func ignorePatterns(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dockerignore)
	if err != nil {
		t.Fatalf("the build context has no .dockerignore: %v", err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Trim(path.Clean(line), "/"))
	}
	return out
}

// matchIgnore reports whether pattern (Docker's syntax: path.Match plus "**"
// for any number of directories) matches rel.
func matchIgnore(pattern, rel string) bool {
	pp, rp := strings.Split(pattern, "/"), strings.Split(rel, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(pp) {
			return j == len(rp)
		}
		if pp[i] == "**" {
			for k := j; k <= len(rp); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		}
		if j == len(rp) {
			return false
		}
		ok, err := path.Match(pp[i], rp[j])
		return err == nil && ok && match(i+1, j+1)
	}
	return match(0, 0)
}

// ignored reports whether rel, or a directory it is in, is excluded; a later
// "!pattern" re-includes, as in Docker.
func ignored(patterns []string, rel string) bool {
	parts := strings.Split(rel, "/")
	out := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		for n := 1; n <= len(parts); n++ {
			if matchIgnore(p, strings.Join(parts[:n], "/")) {
				out = !neg
				break
			}
		}
	}
	return out
}

func TestMatchIgnore(t *testing.T) {
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{".git", ".git", true},
		{".git", "x/.git", false},
		{"**/node_modules", "console/web/node_modules", true},
		{"**/node_modules", "node_modules", true},
		{"**/*.test", "broker/broker.test", true},
		{"data", "database", false},
		{"bin", "bin", true},
		{"integration/java/target", "integration/java/target", true},
	} {
		if got := matchIgnore(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("matchIgnore(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
	if !ignored([]string{"data"}, "data/dev/n0/commitlog/00000000000000000000") {
		t.Error("a file inside an ignored directory is not ignored")
	}
	if ignored([]string{"data", "!data/keep"}, "data/keep/x") {
		t.Error("a re-included directory is still ignored")
	}
}

// TestDockerignoreKeepsContextSmall: .git and the local clusters' CommitLog
// segments (1 GiB each) must not travel to the builder; the module must.
func TestDockerignoreKeepsContextSmall(t *testing.T) {
	ps := ignorePatterns(t)
	for _, rel := range []string{
		".git/objects/pack/pack-1.pack",
		"data/dev/n0/commitlog/00000000000000000000",
		"bin/rocketraft",
		"integration/java/target/classes/X.class",
		"console/node_modules/x/index.js",
		"broker/broker.test",
	} {
		if !ignored(ps, rel) {
			t.Errorf(".dockerignore lets %s into the build context", rel)
		}
	}
	for _, rel := range []string{"go.mod", "go.sum", "cmd/rocketraft/main.go", "broker/start.go", "store/testdata/x", "docker/Dockerfile"} {
		if ignored(ps, rel) {
			t.Errorf(".dockerignore excludes %s, which the build needs", rel)
		}
	}
}

// TestComposeBuildsImageOnce: one service builds rocketraft:latest, the rest
// run that image (four identical builds before).
func TestComposeBuildsImageOnce(t *testing.T) {
	cf := loadCompose(t)
	var builders []string
	var image string
	for name, s := range cf.Services {
		if s.Build != nil {
			builders = append(builders, name)
			image = s.Image
		}
	}
	if len(builders) != 1 || image == "" {
		t.Fatalf("services with build: %v (image %q); want exactly one, naming its image", builders, image)
	}
	b := cf.Services[builders[0]].Build
	ctx, _ := b["context"].(string)
	dockerfile, _ := b["dockerfile"].(string)
	if _, err := os.Stat(filepath.Join(ctx, dockerfile)); err != nil || dockerfile == "" {
		t.Errorf("%s: build dockerfile %q in context %q: %v", builders[0], dockerfile, ctx, err)
	}
	if abs, _ := filepath.Abs(ctx); abs != mustAbs(t, filepath.Dir(dockerignore)) {
		t.Errorf("%s: build context %q is not the directory of the .dockerignore (%s)", builders[0], ctx, dockerignore)
	}
	for name, s := range cf.Services {
		if name == builders[0] {
			continue
		}
		if s.Image != image {
			t.Errorf("%s: image %q, want the built %q", name, s.Image, image)
		}
		// Nothing to pull: the image exists only where it was built.
		if s.PullPolicy != "never" {
			t.Errorf("%s: pull_policy %q, want never (%s is built locally by %s)", name, s.PullPolicy, image, builders[0])
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestComposeAdminPortsOnLoopback: adminListen serves /metrics and
// /debug/pprof; publishing it on every host interface hands profiles and
// heap dumps to the network. Only the client ports may be public.
func TestComposeAdminPortsOnLoopback(t *testing.T) {
	cf := loadCompose(t)
	for _, l := range loadServices(t, cf) {
		adminPort := ""
		if l.admin != "" {
			adminPort = port(t, l.admin)
		}
		for _, spec := range l.svc.Ports {
			pub, ok := parsePublished(spec)
			if !ok {
				t.Errorf("%s: port %q is not [ip:]host:container", l.name, spec)
				continue
			}
			switch pub.containerPort {
			case adminPort:
				if ip := net.ParseIP(pub.hostIP); ip == nil || !ip.IsLoopback() {
					t.Errorf("%s: admin port %s (adminListen=%s: metrics, pprof) published as %q, want 127.0.0.1:%s:%s",
						l.name, adminPort, l.admin, spec, pub.hostPort, adminPort)
				}
			case l.clients:
			case l.vip: // "" never matches: the nameserver has no VIP channel
			default:
				t.Errorf("%s: publishes %q, which is neither listenPort %s, its VIP channel nor adminListen's port", l.name, spec, l.clients)
			}
		}
	}
}

// TestComposeHealthChecksWaitForStartup: without start_period a check that
// fails while the process recovers counts towards unhealthy, and dependants
// (depends_on: service_healthy) give up.
func TestComposeHealthChecksWaitForStartup(t *testing.T) {
	cf := loadCompose(t)
	for name, s := range cf.Services {
		if len(s.Healthcheck.Test) == 0 {
			t.Errorf("%s: no health check", name)
			continue
		}
		d, err := time.ParseDuration(s.Healthcheck.StartPeriod)
		if err != nil || d <= 0 {
			t.Errorf("%s: health check start_period %q, want a positive duration", name, s.Healthcheck.StartPeriod)
		}
	}
}
