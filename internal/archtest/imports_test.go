package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path; rules name packages relative to it.
const module = "github.com/transcript-bridge/bridge"

// rules are the import rules: no package matching from (other than those matching except)
// imports, directly or through other packages of the module, in its code or its tests, a
// package matching forbid. A pattern is a package path relative to the module; "x/..." is x
// and everything under it, "..." is every package.
var rules = []struct {
	name                 string
	from, except, forbid string
}{
	// The source owns the Recording; data flows down: connectors → mapping → bridge.
	{name: "connectors never import the bridge", from: "connectors/...", forbid: "bridge/..."},
	{name: "mapping never imports the bridge", from: "mapping/...", forbid: "bridge/..."},
	// cmd/ wires the parts together; nothing builds on it.
	{name: "nothing imports cmd", from: "...", except: "cmd/...", forbid: "cmd/..."},
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

func TestImportRules(t *testing.T) {
	graph := load(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range violations(graph, r.from, r.except, r.forbid) {
				t.Error(v)
			}
		})
	}
}

// TestViolationsNameTheImport: a forbidden import is reported with the importer and the
// imported package, through an intermediate package and from tests too; a clean graph
// reports nothing.
func TestViolationsNameTheImport(t *testing.T) {
	graph := map[string]*pkg{
		"connectors":      {ImportPath: "connectors"},
		"connectors/zoom": {ImportPath: "connectors/zoom", Imports: []string{"connectors", "internal/x", "time"}},
		"connectors/s3":   {ImportPath: "connectors/s3", XTestImports: []string{"bridge/sqlite"}},
		"internal/x":      {ImportPath: "internal/x", Imports: []string{"bridge"}},
		"bridge":          {ImportPath: "bridge", Imports: []string{"connectors"}},
		"bridge/sqlite":   {ImportPath: "bridge/sqlite", Imports: []string{"bridge"}},
		"cmd/bridge":      {ImportPath: "cmd/bridge", Imports: []string{"bridge", "connectors/zoom"}},
	}
	got := violations(graph, "connectors/...", "", "bridge/...")
	want := []string{
		"connectors/s3 (its tests) imports bridge/sqlite",
		"connectors/zoom imports bridge, through connectors/zoom → internal/x → bridge",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := violations(graph, "...", "cmd/...", "cmd/..."); len(got) != 0 {
		t.Errorf("violations of a clean graph = %q, want none", got)
	}
}

// load lists the module's packages, keyed by their path relative to the module.
func load(t *testing.T) map[string]*pkg {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		p.ImportPath = rel(p.ImportPath)
		for _, list := range []*[]string{&p.Imports, &p.TestImports, &p.XTestImports} {
			for i, imp := range *list {
				(*list)[i] = rel(imp)
			}
		}
		graph[p.ImportPath] = &p
	}
	if len(graph) == 0 {
		t.Fatal("go list found no package")
	}
	return graph
}

// rel is path relative to the module ("." for the module's root package); other paths stay
// whole.
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return path
}

// match reports whether the package path p matches pattern.
func match(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// violations lists, sorted, each package matching from (not except) that imports one matching
// forbid, directly or through the module's packages, from its code or from its tests, naming
// the forbidden package and, when indirect, the chain of imports that leads there.
func violations(graph map[string]*pkg, from, except, forbid string) []string {
	var out []string
	for _, p := range graph {
		if !match(from, p.ImportPath) || except != "" && match(except, p.ImportPath) {
			continue
		}
		if chain := reach(graph, p.ImportPath, p.Imports, forbid); chain != nil {
			out = append(out, describe(p.ImportPath, "", chain))
		}
		tests := append(slices.Clone(p.TestImports), p.XTestImports...)
		if chain := reach(graph, p.ImportPath, tests, forbid); chain != nil {
			out = append(out, describe(p.ImportPath, " (its tests)", chain))
		}
	}
	slices.Sort(out)
	return out
}

// reach returns the shortest chain of imports from importer, starting with one of imports and
// ending in a package matching forbid; nil when there is none. Only the module's packages are
// followed (nothing outside the module imports it).
func reach(graph map[string]*pkg, importer string, imports []string, forbid string) []string {
	parent := map[string]string{}
	queue := []string{}
	for _, imp := range imports {
		if _, seen := parent[imp]; !seen && imp != importer {
			parent[imp] = importer
			queue = append(queue, imp)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if match(forbid, cur) {
			chain := []string{cur}
			for p := parent[cur]; p != importer; p = parent[p] {
				chain = append([]string{p}, chain...)
			}
			return append([]string{importer}, chain...)
		}
		next, ok := graph[cur]
		if !ok {
			continue // the standard library or another module
		}
		for _, imp := range next.Imports {
			if _, seen := parent[imp]; !seen && imp != importer {
				parent[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// describe says that importer imports the last package of chain, and through what when the
// chain is longer than one step.
func describe(importer, what string, chain []string) string {
	msg := fmt.Sprintf("%s%s imports %s", importer, what, chain[len(chain)-1])
	if len(chain) > 2 {
		msg += ", through " + strings.Join(chain, " → ")
	}
	return msg
}
