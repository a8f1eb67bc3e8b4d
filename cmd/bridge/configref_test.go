package main

// The configuration reference, docs/configuration.md, is generated from the configuration
// structs' doc comments (read with go/ast, walked alongside the types by reflection), their
// defaults (setDefaults, and the checks that fill in an export's or a webhook's) and the
// connectors' options (the fields of each registered source type's Config tagged koanf, with
// the defaults of its SetDefaults). TestConfigReference fails when the
// committed file is stale or a field has no doc comment; `go generate ./cmd/bridge` rewrites it.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/connectors"
)

var updateConfigRef = flag.Bool("configref.update", false, "rewrite docs/configuration.md (go generate ./cmd/bridge)")

// configRefPath is the reference, relative to the repository root.
const configRefPath = "docs/configuration.md"

// TestConfigReference: docs/configuration.md is what the doc comments say, and every
// configuration field (and every connector option) has a doc comment.
func TestConfigReference(t *testing.T) {
	root := filepath.Join("..", "..")
	got, missing, err := configReference(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("%s has no doc comment; every configuration field needs one (it is its description in %s)", m, configRefPath)
	}
	path := filepath.Join(root, configRefPath)
	if *updateConfigRef {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v; generate it with: go generate ./cmd/bridge", configRefPath, err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < min(len(gl), len(wl)) && gl[i] == wl[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Errorf("%s is stale: regenerate it with: go generate ./cmd/bridge\nfirst difference, line %d:\n  committed: %s\n  generated: %s",
			configRefPath, i+1, line(wl), line(gl))
	}
}

// refRow is one key of the reference.
type refRow struct {
	key, typ, def, doc string
}

// refSection is one table: a top-level key, or one connector's options.
type refSection struct {
	title, intro string
	rows         []refRow
}

// refGen reads the source files the reference is made from.
type refGen struct {
	root, module string
	fset         *token.FileSet
	pkgs         map[string][]*ast.File // parsed non-test files by directory
	missing      []string               // fields and options without a doc comment
}

// configReference renders docs/configuration.md from the sources under root; missing lists
// the fields and options without a doc comment.
func configReference(root string) ([]byte, []string, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, nil, err
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(mod), "module "), "\n")
	g := &refGen{root: root, module: strings.TrimSpace(module), fset: token.NewFileSet(), pkgs: map[string][]*ast.File{}}

	ct := reflect.TypeFor[Config]()
	cst, err := g.structOf(ct)
	if err != nil {
		return nil, nil, err
	}
	defaults := reflect.ValueOf(configDefaults())
	var sections []refSection
	for i := range ct.NumField() {
		f := ct.Field(i)
		if !f.IsExported() {
			continue // bookkeeping of loadConfig, not a setting
		}
		af, doc := g.fieldDoc(cst, f.Name, "Config")
		name, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		sec := refSection{title: name, intro: doc}
		ft, dv := f.Type, defaults.Field(i)
		if ft.Kind() == reflect.Slice {
			sec.title += "[]"
			ft, dv = ft.Elem(), dv.Index(0)
		}
		var decl ast.Expr
		if af != nil {
			decl = af.Type
		}
		if ft.Kind() != reflect.Struct {
			sec.rows = append(sec.rows, g.leaf(sec.title, f, af, doc, dv))
		} else if err := g.walk(ft, decl, sec.title+".", "Config."+f.Name, dv, &sec.rows); err != nil {
			return nil, nil, err
		}
		sections = append(sections, sec)
		if name == "sources" {
			opts, err := g.connectorOptions()
			if err != nil {
				return nil, nil, err
			}
			sections = append(sections, opts...)
		}
	}
	return renderReference(sections), g.missing, nil
}

// configDefaults is a Config with one entry in each list and every default filled in: those
// of setDefaults, and those an export's and a webhook's checks fill in (export.Config.Validate,
// relay.NewEndpoint), read off an entry they accept.
func configDefaults() Config {
	c := Config{Sources: make([]SourceConfig, 1), Webhooks: make([]relay.EndpointConfig, 1), Exports: make([]export.Config, 1)}
	c.setDefaults()
	if nb := (natsbus.Config{}); nb.Validate() == nil { // the NATS bus's defaults
		c.Bus.Config = nb
	}
	probe := export.Config{Name: "x", Schedule: "@daily", Destination: "x"}
	before := probe
	if probe.Validate() == nil {
		copyFilled(reflect.ValueOf(&c.Exports[0]).Elem(), reflect.ValueOf(before), reflect.ValueOf(probe))
	}
	secret, _ := webhook.NewSecret()
	in := relay.EndpointConfig{Name: "x", URL: "https://example.com", Secrets: []webhook.Secret{secret}}
	if e, err := relay.NewEndpoint(in); err == nil {
		copyFilled(reflect.ValueOf(&c.Webhooks[0]).Elem(), reflect.ValueOf(in), reflect.ValueOf(e.EndpointConfig))
	}
	return c
}

// copyFilled sets each exported field of dst that was zero in before and is set in after (a
// default a check filled in), matching fields by name.
func copyFilled(dst, before, after reflect.Value) {
	for i := range dst.NumField() {
		name := dst.Type().Field(i).Name
		b, a := before.FieldByName(name), after.FieldByName(name)
		if !dst.Type().Field(i).IsExported() || !b.IsValid() || !b.IsZero() || a.IsZero() || a.Type() != dst.Field(i).Type() {
			continue
		}
		dst.Field(i).Set(a)
	}
}

// walk adds a row for each key of struct type t (declared by st), recursing into nested
// structs; prefix is the key path so far ("sources[]."), goPath the Go path for messages.
func (g *refGen) walk(t reflect.Type, decl ast.Expr, prefix, goPath string, defaults reflect.Value, rows *[]refRow) error {
	st, err := g.structFor(t, decl)
	if err != nil {
		return err
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if opts == "squash" && f.Anonymous && f.Type.Kind() == reflect.Struct { // its keys are the section's own
			if err := g.walk(f.Type, nil, prefix, goPath+"."+f.Name, defaults.Field(i), rows); err != nil {
				return err
			}
			continue
		}
		af, doc := g.fieldDoc(st, f.Name, goPath)
		if name == "-" {
			continue // set in Go only (a webhook's secrets, read from secret_file); documented all the same
		}
		var decl ast.Expr
		if af != nil {
			decl = af.Type
		}
		if opts == "remain" {
			*rows = append(*rows, refRow{key: prefix + "…", typ: "", doc: doc + " See the options of each type below."})
			continue
		}
		key := prefix + name
		ft := f.Type
		if ft.Kind() == reflect.Struct {
			*rows = append(*rows, refRow{key: key, typ: "keys", doc: keyFirst(doc, af, f.Name, name)})
			if err := g.walk(ft, decl, key+".", goPath+"."+f.Name, defaults.Field(i), rows); err != nil {
				return err
			}
			continue
		}
		*rows = append(*rows, g.leaf(key, f, af, doc, defaults.Field(i)))
	}
	return nil
}

// leaf is the row of one value.
func (g *refGen) leaf(key string, f reflect.StructField, af *ast.Field, doc string, def reflect.Value) refRow {
	name := key[strings.LastIndexAny(key, ".]")+1:]
	return refRow{key: key, typ: typeName(f.Type), def: formatDefault(def), doc: keyFirst(doc, af, f.Name, name)}
}

// keyFirst replaces the Go name a doc comment starts with by the key ("PollInterval is how
// often" becomes "`poll_interval` is how often") when the field declares one name.
func keyFirst(doc string, af *ast.Field, goName, key string) string {
	if af == nil || len(af.Names) != 1 || !strings.HasPrefix(doc, goName+" ") ||
		!strings.EqualFold(strings.ReplaceAll(key, "_", ""), goName) {
		return doc
	}
	return "`" + key + "`" + strings.TrimPrefix(doc, goName)
}

// typeName says what a key takes.
func typeName(t reflect.Type) string {
	t = derefType(t)
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem()) + "s"
	case t.Kind() == reflect.Map:
		return "map of " + typeName(t.Elem()) + "s"
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	}
	return "string"
}

// formatDefault shows a default value; the zero value shows as nothing.
func formatDefault(v reflect.Value) string {
	if !v.IsValid() || v.IsZero() {
		return ""
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice {
		var items []string
		for i := range v.Len() {
			items = append(items, formatDefault(v.Index(i)))
		}
		return strings.Join(items, ", ")
	}
	if d, ok := v.Interface().(time.Duration); ok {
		return formatDuration(d)
	}
	return fmt.Sprint(v.Interface())
}

// formatDuration writes 2m and 72h rather than 2m0s and 72h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// files parses the non-test Go files of a directory under the root (once).
func (g *refGen) files(dir string) ([]*ast.File, error) {
	if fs, ok := g.pkgs[dir]; ok {
		return fs, nil
	}
	entries, err := os.ReadDir(filepath.Join(g.root, dir))
	if err != nil {
		return nil, err
	}
	var out []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(g.fset, filepath.Join(g.root, dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	g.pkgs[dir] = out
	return out, nil
}

// dirOf is the directory, relative to the root, of the package that declares named type t.
func (g *refGen) dirOf(t reflect.Type) string {
	if t.PkgPath() == "main" {
		return filepath.Join("cmd", "bridge")
	}
	return filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(t.PkgPath(), g.module), "/"))
}

// typeDecl finds the declaration of type name in dir.
func (g *refGen) typeDecl(dir, name string) (*ast.TypeSpec, error) {
	files, err := g.files(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.Name == name {
					return ts, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("configref: no type %s in %s", name, dir)
}

// structOf finds the struct declaration of named type t.
func (g *refGen) structOf(t reflect.Type) (*ast.StructType, error) {
	ts, err := g.typeDecl(g.dirOf(t), t.Name())
	if err != nil {
		return nil, err
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("configref: %s is not a struct", t.Name())
	}
	return st, nil
}

// structFor is the struct declaration of t: written inline where the field is declared
// (decl), or that of its named type.
func (g *refGen) structFor(t reflect.Type, decl ast.Expr) (*ast.StructType, error) {
	for {
		switch d := decl.(type) {
		case *ast.StructType:
			return d, nil
		case *ast.ArrayType:
			decl = d.Elt
			continue
		case *ast.StarExpr:
			decl = d.X
			continue
		}
		break
	}
	if t.Name() == "" {
		return nil, fmt.Errorf("configref: no declaration for %v", t)
	}
	return g.structOf(t)
}

// fieldDoc finds field name in st and its doc comment (collapsed to one line); a field without
// one is recorded as missing.
func (g *refGen) fieldDoc(st *ast.StructType, name, goPath string) (*ast.Field, string) {
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name != name {
				continue
			}
			doc := f.Doc.Text()
			if doc == "" {
				doc = f.Comment.Text()
			}
			if doc = strings.Join(strings.Fields(doc), " "); doc == "" {
				g.missing = append(g.missing, goPath+"."+name)
			}
			return f, doc
		}
	}
	g.missing = append(g.missing, goPath+"."+name+" (not found in the source)")
	return nil, ""
}

// connectorOptions documents the options of each registered source type: the fields of its
// Config tagged koanf, with their doc comments, the defaults its SetDefaults sets
// (connectors.Defaults), and "required" for those its Validate reports missing.
func (g *refGen) connectorOptions() ([]refSection, error) {
	var out []refSection
	for _, typ := range connectors.Types() {
		def, _ := connectors.Defaults(typ)
		rows, err := g.options(def)
		if err != nil {
			return nil, fmt.Errorf("configref: source type %s: %w", typ, err)
		}
		out = append(out, refSection{title: "sources[] with type: " + typ,
			intro: fmt.Sprintf("Options of a source with `type: %s`, beside the common keys above.", typ), rows: rows})
	}
	if len(out) == 0 {
		return nil, errors.New("configref: no source type registered (cmd/bridge imports the connectors)")
	}
	return out, nil
}

// globsType is the type of an option that takes globs.
var globsType = reflect.TypeFor[connectors.Globs]()

// options lists the options of a connector's Config (def, a Config struct with its defaults
// set) in the order of its fields; every exported field needs a doc comment, option or not.
func (g *refGen) options(def any) ([]refRow, error) {
	v := reflect.ValueOf(def)
	t := v.Type()
	st, err := g.structOf(t)
	if err != nil {
		return nil, err
	}
	goPath := filepath.ToSlash(g.dirOf(t)) + "." + t.Name()
	required := requiredOptions(def)
	var rows []refRow
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		af, doc := g.fieldDoc(st, f.Name, goPath)
		key, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if key == "" || key == "-" {
			continue // set in Go only (a clock, a secret read from its file)
		}
		row := refRow{key: "sources[]." + key, typ: typeName(f.Type), def: formatDefault(v.Field(i)), doc: keyFirst(doc, af, f.Name, key)}
		if f.Type == globsType {
			row.typ = "list of globs"
		}
		if required[key] {
			row.def = "required"
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no field tagged koanf", goPath)
	}
	return rows, nil
}

// requiredOptions are the text options the Validate of def (a connector's Config with its
// defaults) reports missing (connectors.ErrRequired): asked again after each is filled in with
// a placeholder, until it reports something else.
func requiredOptions(def any) map[string]bool {
	p := reflect.New(reflect.TypeOf(def))
	p.Elem().Set(reflect.ValueOf(def))
	out := map[string]bool{}
	v, ok := p.Interface().(interface{ Validate() error })
	if !ok {
		return out
	}
	fields := connectors.OptionFields(p.Elem().Type())
	for range fields {
		var oe *connectors.OptionError
		err := v.Validate()
		if !errors.As(err, &oe) || !errors.Is(err, connectors.ErrRequired) || out[oe.Key] {
			break
		}
		i, ok := fields[oe.Key]
		if !ok || p.Elem().Field(i).Kind() != reflect.String {
			break
		}
		out[oe.Key] = true
		p.Elem().Field(i).SetString("placeholder")
	}
	return out
}

// renderReference writes the Markdown.
func renderReference(sections []refSection) []byte {
	var b bytes.Buffer
	b.WriteString(`<!-- Code generated by "go generate ./cmd/bridge" (TestConfigReference in cmd/bridge/configref_test.go); DO NOT EDIT. -->

# Configuration reference

Every key the bridge reads, generated from the doc comments of the configuration types
(` + "`cmd/bridge/*config.go`, `bridge/export/config.go`, `bridge/relay/endpoint.go`," + `
` + "`bridge/natsbus/config.go`" + `) and of the connectors' options
(` + "`connectors/*/options.go`" + `). After changing them, regenerate this file with
` + "`go generate ./cmd/bridge`" + `; a test fails while it is stale.

Settings are read from ` + "`configs/bridge.yaml`" + ` (or ` + "`--config FILE`" + `; without either, a built-in
default with one ` + "`localdir`" + ` source), then from ` + "`BRIDGE_`" + ` environment variables, then from
` + "`--set key=value`" + ` flags, each overriding the one before:

- A key is a path: ` + "`api.poll_interval`" + `. List entries are addressed by index, from 0:
  ` + "`sources.0.path`" + ` (` + "`--set`" + ` also takes ` + "`sources[0].path`" + `); the index one past the last entry adds
  one. Items of a list of values are addressed the same way (` + "`sources.0.upload.reports.1`" + `).
- A variable is ` + "`BRIDGE_`" + ` and the path in capitals with ` + "`__`" + ` between the parts:
  ` + "`BRIDGE_API__POLL_INTERVAL=10s`, `BRIDGE_SOURCES__0__PATH=/srv/inbox`" + `. ` + "`BRIDGE_API_BASE_URL`" + `,
  ` + "`BRIDGE_API_KEY` and `BRIDGE_API_KEY_FILE` set `api.base_url`, `api.key` and `api.key_file`" + `.
  Variables without ` + "`__`" + ` (such as ` + "`BRIDGE_FAILPOINTS`" + `) are not settings.
- Values are typed by their key: durations as ` + "`30s`, `5m`, `1h30m`" + `; booleans as ` + "`true`/`false`" + `;
  lists as comma-separated text (` + "`summary,topics`" + `).
- Unknown keys and bad values refuse to start, naming where they were written (the file's
  line and column, the variable, the flag) and the key.

**Default** is the value used when the key is not set; defaults that depend on other settings
are given in the description.
`)
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## `%s`\n\n", s.title)
		if s.intro != "" {
			b.WriteString(s.intro + "\n\n")
		}
		b.WriteString("| Key | Type | Default | Description |\n|---|---|---|---|\n")
		for _, r := range s.rows {
			def := ""
			if r.def != "" {
				def = "`" + r.def + "`"
				if r.def == "required" {
					def = "required"
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, cell(def), cell(r.doc))
		}
	}
	return b.Bytes()
}

// cell escapes a table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// TestConfigReferenceHelpers covers the pieces the reference is made of.
func TestConfigReferenceHelpers(t *testing.T) {
	durations := []struct {
		d    time.Duration
		want string
	}{{2 * time.Minute, "2m"}, {72 * time.Hour, "72h"}, {90 * time.Minute, "1h30m"}, {500 * time.Millisecond, "500ms"}, {5 * time.Second, "5s"}}
	for _, tc := range durations {
		if got := formatDuration(tc.d); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	types := []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[time.Duration](), "duration"}, {reflect.TypeFor[[]time.Duration](), "list of durations"},
		{reflect.TypeFor[*bool](), "bool"}, {reflect.TypeFor[map[string]string](), "map of strings"}, {reflect.TypeFor[float64](), "number"},
	}
	for _, tc := range types {
		if got := typeName(tc.t); got != tc.want {
			t.Errorf("typeName(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
	docs := []struct{ doc, goName, key, want string }{
		{"PollInterval is how often", "PollInterval", "poll_interval", "`poll_interval` is how often"},
		{"BaseURL of the API", "BaseURL", "base_url", "`base_url` of the API"},
		{"Credentials is a key", "Credentials", "credentials_file", "Credentials is a key"},
	}
	for _, tc := range docs {
		af := &ast.Field{Names: []*ast.Ident{ast.NewIdent(tc.goName)}}
		if got := keyFirst(tc.doc, af, tc.goName, tc.key); got != tc.want {
			t.Errorf("keyFirst(%q, %s) = %q, want %q", tc.doc, tc.key, got, tc.want)
		}
	}
	if d := configDefaults(); d.Exports[0].Format != "md" || d.Webhooks[0].Timeout == 0 || d.Sources[0].Schedule == "" {
		t.Errorf("configDefaults() = %+v, want the export's format, the webhook's timeout and the source's schedule filled in", d)
	}
}

// refProbe is a connector's Config for TestConfigReferenceOptions.
type refProbe struct {
	// Path is the folder.
	Path string `koanf:"path"`
	// Days is how far back.
	Days int `koanf:"days"`
	// SecretFile holds the token (read into Secret).
	SecretFile string `koanf:"secret_file"`
	// Include keeps matching files.
	Include      connectors.Globs `koanf:"include"`
	Undocumented bool             `koanf:"undocumented"`
	// Secret is the token, when not read from a file.
	Secret string
	Now    func() time.Time
	hidden bool
}

func (c *refProbe) SetDefaults() {
	c.Undocumented = true
	if c.Days == 0 {
		c.Days = 3
	}
}

func (c *refProbe) Validate() error {
	if err := connectors.Required("path", c.Path); err != nil {
		return err
	}
	if c.hidden {
		return errors.New("hidden")
	}
	return connectors.Required("secret_file", c.Secret+c.SecretFile)
}

// TestConfigReferenceOptions: a connector's options are its Config's fields tagged koanf, in
// order, with their types, the defaults of SetDefaults, "required" for those Validate reports
// missing, and their doc comments; a field without one, option or not, is reported.
func TestConfigReferenceOptions(t *testing.T) {
	fset := token.NewFileSet()
	self, err := parser.ParseFile(fset, "configref_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	g := &refGen{module: "github.com/transcript-bridge/bridge", fset: fset, pkgs: map[string][]*ast.File{filepath.Join("cmd", "bridge"): {self}}}
	var def refProbe
	def.SetDefaults()
	rows, err := g.options(def)
	if err != nil {
		t.Fatal(err)
	}
	want := []refRow{
		{"sources[].path", "string", "required", "`path` is the folder."},
		{"sources[].days", "integer", "3", "`days` is how far back."},
		{"sources[].secret_file", "string", "required", "`secret_file` holds the token (read into Secret)."},
		{"sources[].include", "list of globs", "", "`include` keeps matching files."},
		{"sources[].undocumented", "bool", "true", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("options(refProbe) = %d rows %+v, want %d", len(rows), rows, len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("options(refProbe) row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
	wantMissing := []string{"cmd/bridge.refProbe.Undocumented", "cmd/bridge.refProbe.Now"}
	if strings.Join(g.missing, "; ") != strings.Join(wantMissing, "; ") {
		t.Errorf("missing = %q, want %q", g.missing, wantMissing)
	}
	if got := requiredOptions(refProbe{hidden: true}); len(got) != 1 || !got["path"] {
		t.Errorf("requiredOptions(refProbe{hidden}) = %v, want only path (Validate stops saying required)", got)
	}
}
