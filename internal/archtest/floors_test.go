package archtest

import (
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Rooms whose files must form floors: no file uses a declaration of a file that
// (directly or through others) uses it back. docs/architecture.md gives the
// numbers this test logs with -v.
const floorsPattern = "./broker/..."

// exportedPackage is what `go list -export` says of one package.
type exportedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

// typeCheck type-checks every package matching pattern from source, importing
// its dependencies from the compiler's export data (go list -export), so the
// test needs nothing beyond the go command.
func typeCheck(t *testing.T, pattern string) map[string]*checked {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", pattern)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	var targets []exportedPackage
	want := map[string]bool{}
	list := exec.Command("go", "list", pattern)
	list.Dir = repoRoot(t)
	names, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, n := range strings.Fields(string(names)) {
		want[n] = true
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p exportedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if want[p.ImportPath] {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	result := map[string]*checked{}
	for _, p := range targets {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		pkg, err := conf.Check(p.ImportPath, fset, files, info)
		if err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		result[rel(p.ImportPath)] = &checked{fset: fset, pkg: pkg, files: files, info: info}
	}
	return result
}

type checked struct {
	fset  *token.FileSet
	pkg   *types.Package
	files []*ast.File
	info  *types.Info
}

// fileEdges maps each file (base name) to the files of the same package whose
// declarations it uses.
func (c *checked) fileEdges() map[string]map[string]bool {
	edges := map[string]map[string]bool{}
	for _, f := range c.files {
		from := filepath.Base(c.fset.Position(f.Pos()).Filename)
		edges[from] = map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := c.info.Uses[id]
			if obj == nil || obj.Pkg() != c.pkg || !obj.Pos().IsValid() {
				return true
			}
			to := filepath.Base(c.fset.Position(obj.Pos()).Filename)
			if to != from {
				edges[from][to] = true
			}
			return true
		})
	}
	return edges
}

// cycle returns one cycle of the graph, or nil.
func cycle(edges map[string]map[string]bool) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		next := make([]string, 0, len(edges[n]))
		for m := range edges[n] {
			next = append(next, m)
		}
		sort.Strings(next)
		for _, m := range next {
			switch color[m] {
			case grey:
				for i, s := range stack {
					if s == m {
						found = append(append([]string{}, stack[i:]...), m)
					}
				}
				return true
			case white:
				if visit(m) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	nodes := make([]string, 0, len(edges))
	for n := range edges {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		if color[n] == white && visit(n) {
			return found
		}
	}
	return nil
}

// TestFilesFormFloors: inside every room of broker/, the files use each other
// one way, so each can be read knowing only the files below it.
func TestFilesFormFloors(t *testing.T) {
	pkgs := typeCheck(t, floorsPattern)
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		c := pkgs[name]
		edges := c.fileEdges()
		refs := 0
		for _, to := range edges {
			refs += len(to)
		}
		t.Logf("%-20s %2d files, %3d file-to-file references", name, len(c.files), refs)
		if len(c.files) > maxRoomFiles {
			t.Errorf("%s has %d files; split it by concern (limit %d)", name, len(c.files), maxRoomFiles)
		}
		if cyc := cycle(edges); cyc != nil {
			t.Errorf("%s: files use each other in a circle: %s", name, strings.Join(cyc, " → "))
		}
	}
}

// maxRoomFiles is the size past which a room is split (issue 10: ~15 files).
const maxRoomFiles = 15

// TestProduceRequestStaysInThreeFiles: the files of broker/clientapi that
// handleSend reaches (its own and every same-package function, method or type
// it uses, transitively) are at most three.
func TestProduceRequestStaysInThreeFiles(t *testing.T) {
	pkgs := typeCheck(t, "./broker/clientapi")
	c := pkgs["broker/clientapi"]
	decls := map[types.Object]ast.Node{}
	for _, f := range c.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				decls[c.info.Defs[d.Name]] = d
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						decls[c.info.Defs[s.Name]] = s
					case *ast.ValueSpec:
						for _, n := range s.Names {
							decls[c.info.Defs[n]] = s
						}
					}
				}
			}
		}
	}
	api := c.pkg.Scope().Lookup("API")
	if api == nil {
		t.Fatal("clientapi.API not found")
	}
	start, _, _ := types.LookupFieldOrMethod(types.NewPointer(api.Type()), true, c.pkg, "handleSend")
	if start == nil {
		t.Fatal("(*clientapi.API).handleSend not found")
	}
	files := map[string]bool{}
	seen := map[types.Object]bool{}
	var walk func(types.Object)
	walk = func(obj types.Object) {
		if obj == nil || seen[obj] || obj.Pkg() != c.pkg {
			return
		}
		seen[obj] = true
		files[filepath.Base(c.fset.Position(obj.Pos()).Filename)] = true
		n, ok := decls[obj]
		if !ok {
			return
		}
		ast.Inspect(n, func(x ast.Node) bool {
			if id, ok := x.(*ast.Ident); ok {
				if u := c.info.Uses[id]; u != nil && u.Pkg() == c.pkg && (u.Parent() == c.pkg.Scope() || isMethodOf(u, c.pkg)) {
					walk(u)
				}
			}
			return true
		})
	}
	walk(start)
	list := make([]string, 0, len(files))
	for f := range files {
		list = append(list, f)
	}
	sort.Strings(list)
	t.Logf("a produce request is handled in broker/clientapi files %v", list)
	if len(list) > 3 {
		t.Errorf("handleSend reaches %d files of broker/clientapi (%v); keep the send path in three", len(list), list)
	}
}

func isMethodOf(obj types.Object, pkg *types.Package) bool {
	f, ok := obj.(*types.Func)
	return ok && f.Pkg() == pkg && f.Type().(*types.Signature).Recv() != nil
}
