package route

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// sentinelPackages are the packages whose exported errors can reach a client,
// by import name → directory relative to this package.
var sentinelPackages = map[string]string{
	"store":   "../../store",
	"fsm":     "../../fsm",
	"replica": "../replica",
	"route":   ".",
}

// exportedErrors lists pkg.ErrX for every exported package-level variable
// named Err* in the non-test files of dir.
func exportedErrors(t *testing.T, pkg, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
						out = append(out, pkg+"."+n.Name)
					}
				}
			}
		}
	}
	return out
}

// listedErrors reads the names written in errorTable and internalErrors of
// codes.go (pkg.ErrX for other packages, route.ErrX for this one).
func listedErrors(t *testing.T) map[string]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			table := vs.Names[0].Name
			if table != "errorTable" && table != "internalErrors" {
				continue
			}
			ast.Inspect(vs, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && strings.HasPrefix(x.Sel.Name, "Err") {
						listed[id.Name+"."+x.Sel.Name] = table
					}
				case *ast.Ident:
					if strings.HasPrefix(x.Name, "Err") {
						if _, qualified := listed["route."+x.Name]; !qualified {
							listed["route."+x.Name] = table
						}
					}
				}
				return true
			})
		}
	}
	return listed
}

// TestEveryExportedErrorHasACode fails when a package that can answer a client
// gains an exported error that is neither mapped to a response code nor
// declared internal: adding a sentinel is a decision about its code.
func TestEveryExportedErrorHasACode(t *testing.T) {
	listed := listedErrors(t)
	var missing []string
	for pkg, dir := range sentinelPackages {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("package %s: %v", pkg, err)
		}
		errs := exportedErrors(t, pkg, dir)
		if len(errs) == 0 {
			t.Fatalf("package %s (%s): no exported errors found; the parser or the path is wrong", pkg, dir)
		}
		for _, e := range errs {
			if _, ok := listed[e]; !ok {
				missing = append(missing, e)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("exported errors with no row in errorTable and not in internalErrors (codes.go): %v", missing)
	}
}

func TestErrorTableMapsWrappedErrors(t *testing.T) {
	if len(errorTable) < 20 {
		t.Fatalf("error table has %d rows; the parse of codes.go and the table disagree", len(errorTable))
	}
	for _, row := range errorTable {
		wrapped := fmt.Errorf("handler topic=T queue=1: %w", row.err)
		if got := ResponseCode(wrapped); got != row.code {
			// An earlier row may claim the error on purpose; then it must be listed first.
			t.Errorf("%v → %s, want %s", row.err, got, row.code)
		}
	}
	for _, e := range internalErrors {
		for _, row := range errorTable {
			if errors.Is(e, row.err) {
				t.Errorf("%v is both internal and mapped to %s", e, row.code)
			}
		}
		if got := ResponseCode(e); got != transport.SystemError {
			t.Errorf("internal %v → %s, want SYSTEM_ERROR should one ever escape", e, got)
		}
	}
	if ResponseCode(nil) != transport.Success {
		t.Error("nil is not SUCCESS")
	}
	if ResponseCode(errors.New("anything else")) != transport.SystemError {
		t.Error("an unmapped error is not SYSTEM_ERROR")
	}
}

// The cases where the answer matters most to a client, spelled out.
func TestErrorCodesClientsDependOn(t *testing.T) {
	cases := []struct {
		err  error
		want transport.ResponseCode
	}{
		// A per-message FSM refusal reached clients as SYSTEM_ERROR before the
		// table listed fsm's errors.
		{fmt.Errorf("put topic=T: %w", fsm.ErrTopicNotFound), transport.TopicNotExist},
		{fmt.Errorf("put topic=T queue=9: %w", fsm.ErrQueueIDInvalid), transport.InvalidParameter},
		// A config change the FSM refused is the operator's input, whatever it names.
		{fmt.Errorf("%w: %w", replica.ErrConfigRefused, fsm.ErrTopicNotFound), transport.InvalidParameter},
		{fmt.Errorf("%w: raft: leadership lost", replica.ErrUnknownOutcome), transport.SystemError},
		{fmt.Errorf("%w: node: not the leader", replica.ErrNotLeader), transport.ServiceNotAvailable},
		{fmt.Errorf("%w: group busy", replica.ErrBusy), transport.SystemBusy},
		{fmt.Errorf("%w: x", ErrDiskFull), transport.ServiceNotAvailable},
		{fmt.Errorf("%w: x", ErrSubscriptionParse), transport.SubscriptionParseFailed},
		{fmt.Errorf("%w: x", ErrSubscriptionNotExist), transport.SubscriptionNotExist},
	}
	for _, c := range cases {
		if got := ResponseCode(c.err); got != c.want {
			t.Errorf("%v → %s, want %s", c.err, got, c.want)
		}
	}
}
