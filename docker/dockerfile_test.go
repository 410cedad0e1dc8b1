package docker

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dockerfileLines returns the Dockerfile's instructions, continuation lines
// joined and comments dropped.
func dockerfileLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// makeBuildPackage is the package the Makefile's build target compiles.
func makeBuildPackage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^build:.*\n\t\$\(GO\) build .*?(\./\S+)\s*$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("Makefile: no build target running $(GO) build ... ./<package>")
	}
	return m[1]
}

// goDirective is go.mod's "go 1.N[.P]" as "1.N".
func goDirective(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	return m[1]
}

// TestDockerfileBuildsLikeMakefile: the image's binary is the Makefile's
// (same package, the toolchain go.mod asks for), static, in a multi-stage
// build whose runtime stage runs as the fixed non-root uid Kubernetes names.
func TestDockerfileBuildsLikeMakefile(t *testing.T) {
	lines := dockerfileLines(t)
	var froms []string
	var build, user string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "FROM "):
			froms = append(froms, l)
		case strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build"):
			build = l
		case strings.HasPrefix(l, "USER "):
			user = strings.TrimPrefix(l, "USER ")
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, found FROM lines %v", froms)
	}
	if want := "FROM golang:" + goDirective(t) + "-"; !strings.HasPrefix(froms[0], want) {
		t.Errorf("build stage %q does not use go.mod's toolchain (%s…)", froms[0], want)
	}
	pkg := makeBuildPackage(t)
	fields := strings.Fields(build)
	if len(fields) == 0 || fields[len(fields)-1] != pkg {
		t.Errorf("Dockerfile builds %q, want the Makefile's package %s", build, pkg)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-buildvcs=false"} {
		if !strings.Contains(build, want) {
			t.Errorf("Dockerfile build %q lacks %s", build, want)
		}
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "COPY --from=build ") }) {
		t.Error("the runtime stage does not copy the binary from the build stage")
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %q: want a numeric non-root uid (Kubernetes runAsNonRoot checks the number)", user)
	}
}

// TestDockerfileExposesConfiguredPorts: EXPOSE lists every port the mounted
// configs listen on.
func TestDockerfileExposesConfiguredPorts(t *testing.T) {
	var exposed []string
	for _, l := range dockerfileLines(t) {
		if rest, ok := strings.CutPrefix(l, "EXPOSE "); ok {
			exposed = append(exposed, strings.Fields(rest)...)
		}
	}
	for _, l := range loadServices(t, loadCompose(t)) {
		want := []string{l.clients}
		if l.vip != "" {
			want = append(want, l.vip)
		}
		if l.admin != "" {
			want = append(want, port(t, l.admin))
		}
		if l.broker != nil {
			self, _, err := l.broker.Self()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, port(t, self.Addr))
		}
		for _, p := range want {
			if !slices.Contains(exposed, p) {
				t.Errorf("%s listens on %s, which the Dockerfile does not EXPOSE (%v)", l.name, p, exposed)
			}
		}
	}
}
