package console

// The committed bundle in dist/ must be the build of the committed sources in web/, because
// a machine with only Go embeds dist/ as it is. web/build.mjs writes dist/manifest.json with
// the sha256 of every input (web/src/**, the lockfile, package.json, tsconfig.json, the build
// script) and of every output; these tests recompute both without npm, so editing a source
// without rebuilding, or editing the bundle by hand, fails `go test ./console`. The byte-for-byte
// rebuild (which needs npm) is `make console-check`.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

type distManifest struct {
	Esbuild string            `json:"esbuild"`
	Inputs  map[string]string `json:"inputs"`
	Outputs map[string]string `json:"outputs"`
}

func readManifest(t *testing.T) distManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("dist", "manifest.json"))
	if err != nil {
		t.Fatalf("dist/manifest.json: %v (run make console-build)", err)
	}
	var m distManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("dist/manifest.json is not JSON: %v", err)
	}
	if len(m.Inputs) == 0 || len(m.Outputs) == 0 {
		t.Fatalf("dist/manifest.json lists %d inputs and %d outputs; the build writes both", len(m.Inputs), len(m.Outputs))
	}
	return m
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sourceFiles lists what build.mjs pins: every file under web/src plus the four files beside it.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join("web", "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel("web", p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, "build.mjs", "package.json", "package-lock.json", "tsconfig.json")
	sort.Strings(out)
	return out
}

func TestDistManifestMatchesSources(t *testing.T) {
	m := readManifest(t)
	want := sourceFiles(t)
	var listed []string
	for p := range m.Inputs {
		listed = append(listed, p)
	}
	sort.Strings(listed)
	for _, p := range want {
		if _, ok := m.Inputs[p]; !ok {
			t.Errorf("web/%s is not in dist/manifest.json: a source was added without a rebuild (make console-build)", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(want, p) {
			t.Errorf("dist/manifest.json lists web/%s, which no longer exists: rebuild (make console-build)", p)
			continue
		}
		if got := fileSHA(t, filepath.Join("web", filepath.FromSlash(p))); got != m.Inputs[p] {
			t.Errorf("web/%s changed since dist/ was built (sha256 %s, manifest %s): run make console-build and commit dist/", p, got[:12], m.Inputs[p][:12])
		}
	}
}

func TestDistOutputsMatchManifest(t *testing.T) {
	m := readManifest(t)
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		if _, ok := m.Outputs[name]; !ok {
			t.Errorf("dist/manifest.json has no output %s", name)
		}
	}
	entries, err := os.ReadDir("dist")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "manifest.json" {
			continue
		}
		want, ok := m.Outputs[e.Name()]
		if !ok {
			t.Errorf("dist/%s is not an output of the build; remove it or rebuild (make console-build)", e.Name())
			continue
		}
		if got := fileSHA(t, filepath.Join("dist", e.Name())); got != want {
			t.Errorf("dist/%s is not what the build wrote (sha256 %s, manifest %s): edited by hand? run make console-build", e.Name(), got[:12], want[:12])
		}
	}
}

// urlRe finds absolute URLs in the bundle; the only ones allowed are XML namespace names,
// which the browser never fetches (createElementNS compares them as strings).
var urlRe = regexp.MustCompile(`(?i)\b(?:https?:|wss?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"'\s)]*`)

var namespaceURLs = []string{
	"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml", "http://www.w3.org/1998/Math/MathML",
	"http://www.w3.org/1999/xlink", "http://www.w3.org/XML/1998/namespace",
}

func TestDistLoadsNothingFromOtherHosts(t *testing.T) {
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		b, err := os.ReadFile(filepath.Join("dist", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range urlRe.FindAllString(string(b), -1) {
			if !slices.Contains(namespaceURLs, strings.TrimRight(u, ".,;")) {
				t.Errorf("dist/%s names an outside address %q: the console must load nothing from another host", name, u)
			}
		}
		if strings.Contains(string(b), "@import") || strings.Contains(string(b), "@font-face") {
			t.Errorf("dist/%s imports a stylesheet or a font; the console uses system fonts only", name)
		}
	}
	html, _ := os.ReadFile(filepath.Join("dist", "index.html"))
	for _, ref := range []string{`src="/app.js"`, `href="/app.css"`} {
		if !strings.Contains(string(html), ref) {
			t.Errorf("dist/index.html does not reference %s", ref)
		}
	}
}
