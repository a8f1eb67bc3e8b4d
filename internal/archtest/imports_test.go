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
	// Metrics are heard through each part's own small Metrics interface; only cmd wires the
	// Prometheus implementation (bridge/metrics) in.
	{name: "the API client never imports the metrics", from: "api/...", forbid: "bridge/metrics"},
	{name: "the domain never imports the metrics", from: "bridge", forbid: "bridge/metrics"},
	{name: "the relay never imports the metrics", from: "bridge/relay/...", forbid: "bridge/metrics"},
	{name: "the exporter never imports the metrics", from: "bridge/export/...", forbid: "bridge/metrics"},
}

// allowLists are the allow-list rules: the code (not the tests) of a package matching from
// imports, of this module's packages, only those matching one of allow.
var allowLists = []struct {
	name  string
	from  string
	allow []string
}{
	// A store implements the domain's contract (bridge.Store) on its database: it imports the
	// domain, the Recording it stores (connectors), its own subpackages (its bus) and the buses'
	// shared reader (sqlbus), never the
	// relay, the exporter or another store, so a second store needs nothing else either.
	{name: "the SQLite store imports only the domain", from: "bridge/sqlite/...", allow: []string{"bridge", "connectors", "bridge/sqlite/...", "bridge/sqlbus"}},
	{name: "the PostgreSQL store imports only the domain", from: "bridge/postgres/...", allow: []string{"bridge", "connectors", "bridge/postgres/...", "bridge/sqlbus"}},
	// The store copy moves one store's state to another: it opens both through their packages
	// and reads and writes their tables; it needs nothing of the pipeline, the relay or cmd.
	{name: "the store copy imports only the domain and the stores", from: "bridge/storecopy/...",
		allow: []string{"bridge", "bridge/sqlite/...", "bridge/postgres/..."}},
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
	for _, r := range allowLists {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range outsideAllowList(graph, r.from, r.allow) {
				t.Error(v)
			}
		})
	}
}

// TestOutsideAllowListNamesTheImport: an import of the module that no allow pattern matches is
// reported with the importer; the standard library, other modules and tests are not checked.
func TestOutsideAllowListNamesTheImport(t *testing.T) {
	graph := map[string]*pkg{
		"bridge":            {ImportPath: "bridge", Imports: []string{"connectors", "mapping"}},
		"bridge/relay":      {ImportPath: "bridge/relay", Imports: []string{"bridge"}},
		"bridge/sqlite":     {ImportPath: "bridge/sqlite", Imports: []string{"bridge", "bridge/relay", "bridge/sqlite/bus", "database/sql"}, XTestImports: []string{"bridge/storetest"}},
		"bridge/sqlite/bus": {ImportPath: "bridge/sqlite/bus", Imports: []string{"github.com/ThreeDotsLabs/watermill", "mapping"}},
		"bridge/storetest":  {ImportPath: "bridge/storetest", Imports: []string{"bridge"}},
		"connectors":        {ImportPath: "connectors"},
		"mapping":           {ImportPath: "mapping", Imports: []string{"connectors"}},
	}
	got := outsideAllowList(graph, "bridge/sqlite/...", []string{"bridge", "connectors", "bridge/sqlite/..."})
	want := []string{
		"bridge/sqlite imports bridge/relay, which is not among bridge, connectors, bridge/sqlite/...",
		"bridge/sqlite/bus imports mapping, which is not among bridge, connectors, bridge/sqlite/...",
	}
	if !slices.Equal(got, want) {
		t.Errorf("outsideAllowList =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := outsideAllowList(graph, "bridge/relay", []string{"bridge"}); len(got) != 0 {
		t.Errorf("outsideAllowList of an allowed package = %q, want none", got)
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

// outsideAllowList lists, sorted, each import of the module's packages (those in graph) by the
// code of a package matching from that matches none of allow.
func outsideAllowList(graph map[string]*pkg, from string, allow []string) []string {
	var out []string
	for _, p := range graph {
		if !match(from, p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if _, ours := graph[imp]; !ours || slices.ContainsFunc(allow, func(a string) bool { return match(a, imp) }) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s, which is not among %s", p.ImportPath, imp, strings.Join(allow, ", ")))
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
