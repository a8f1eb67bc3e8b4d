package main

// The configuration's layers: the file (or the built-in default), BRIDGE_ variables and --set
// flags are merged into one tree of maps and lists, remembering which layer set each key so
// that an error names the file position, the variable or the flag at fault. Variables and
// flags address list items by index (sources.0.path, BRIDGE_SOURCES__0__PATH); the index one
// past the end adds an entry.

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-viper/mapstructure/v2"
	"gopkg.in/yaml.v3"

	"github.com/transcript-bridge/bridge/api"
)

// origins remembers which layer set each key. Keys are lower-case dotted paths with list items
// by index ("sources.0.path").
type origins struct {
	// fallback names the base layer: "config configs/bridge.yaml" or the built-in default.
	fallback string
	// at is where a key was set: "config bridge.yaml:12:5", "environment BRIDGE_X", "--set x".
	at map[string]string
	// valueAt is where a key's value is written in the file (its own line and column).
	valueAt map[string]string
}

func newOrigins(fallback string) *origins {
	return &origins{fallback: fallback, at: map[string]string{}, valueAt: map[string]string{}}
}

// of names the layer that set path, or else the nearest of its parents; value prefers the
// position of the value itself over its key's.
func (o *origins) of(path string, value bool) string {
	path = strings.ToLower(path)
	for {
		if s, ok := o.valueAt[path]; ok && value {
			return s
		}
		if s, ok := o.at[path]; ok {
			return s
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return o.fallback
		}
		path, value = path[:i], false
	}
}

// set records that layer set path, replacing what the file said about it and below it.
func (o *origins) set(path, layer string) {
	path = strings.ToLower(path)
	for _, m := range []map[string]string{o.at, o.valueAt} {
		for k := range m {
			if k == path || strings.HasPrefix(k, path+".") {
				delete(m, k)
			}
		}
	}
	o.at[path] = layer
}

// attribute prefixes err (from Validate, which starts its message with the key:
// "sources[0].schedule: …") with the layer that set that key.
func (o *origins) attribute(err error) error {
	msg := err.Error()
	end := strings.IndexAny(msg, ": ")
	if end < 0 {
		end = len(msg)
	}
	return fmt.Errorf("%s: %w", o.of(dotted(msg[:end]), false), err)
}

// dotted turns a displayed key (sources[0].path) into a path (sources.0.path).
func dotted(key string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(key)
}

// display shows a path the way Validate does: sources[0].upload.reports.
func display(at []string) string {
	var b strings.Builder
	for _, s := range at {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// keyError is an unknown key or a bad value; its message starts with the key.
type keyError struct {
	at    []string
	msg   string
	value bool  // the value is at fault (not the key)
	err   error // the decoder's error, when it decided
}

func (e *keyError) Error() string { return display(e.at) + ": " + e.msg }
func (e *keyError) Unwrap() error { return e.err }

func keyErrorf(at []string, format string, args ...any) *keyError {
	return &keyError{at: slices.Clone(at), msg: fmt.Sprintf(format, args...)}
}

// field is one key of a configuration struct.
type field struct {
	name   string // the koanf tag: poll_interval
	index  int
	typ    reflect.Type
	remain bool // the ",remain" map that takes a source's connector options
}

// fieldsOf lists the keys of struct type t.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if name == "" && opts != "remain" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, field{name: name, index: i, typ: f.Type, remain: opts == "remain"})
	}
	return out
}

// lookup finds key among t's fields (ignoring case, as the decoder does); a key no field has
// goes to the remain field when there is one.
func lookup(t reflect.Type, key string) (field, bool) {
	var remain *field
	for _, f := range fieldsOf(t) {
		if f.remain {
			remain = &f
		} else if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	if remain != nil {
		return field{name: key, typ: remain.typ.Elem(), remain: true}, true
	}
	return field{}, false
}

// takes lists the keys of t for messages: "base_url, key, key_file".
func takes(t reflect.Type) string {
	var names []string
	for _, f := range fieldsOf(t) {
		if f.remain {
			names = append(names, "the connector's options")
		} else {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ", ")
}

// section names a struct's place in messages, list entries as []: "api", "sources[].upload",
// "the top level".
func section(at []string) string {
	if len(at) == 0 {
		return "the top level"
	}
	return regexp.MustCompile(`\[\d+\]`).ReplaceAllString(display(at), "[]")
}

func derefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isValue reports whether t takes one value (text, a number, a duration, a list of them)
// rather than keys.
func isValue(t reflect.Type) bool {
	switch t = derefType(t); {
	case t == nil || t.Kind() == reflect.Interface:
		return true
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return false
	case t.Kind() == reflect.Slice:
		return isValue(t.Elem())
	}
	return true
}

var durationType = reflect.TypeFor[time.Duration]()

// decoderConfig is how the merged tree becomes a Config: koanf tags, unknown keys refused,
// "true"/"4" accepted for booleans and numbers, durations as text, lists as comma-separated
// text ("5s,1m"), YAML dates as text.
func decoderConfig(result any) *mapstructure.DecoderConfig {
	return &mapstructure.DecoderConfig{
		TagName: "koanf", ErrorUnused: true, WeaklyTypedInput: true, Result: result,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToWeakSliceHookFunc(","), yamlDateToString),
	}
}

// decodeValue checks that v decodes into type t.
func decodeValue(v any, t reflect.Type) error {
	d, err := mapstructure.NewDecoder(decoderConfig(reflect.New(t).Interface()))
	if err != nil {
		return err
	}
	return unwrapDecode(d.Decode(v))
}

// want says what a value of type t looks like, for messages.
func want(t reflect.Type) string {
	switch t = derefType(t); {
	case t == durationType:
		return "a duration (like 30s, 5m or 1h30m)"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Slice:
		return "a list"
	}
	return "text"
}

// check walks v, a part of the merged tree at path at, against t, the type it decodes into,
// and returns the first unknown key or bad value (keys in sorted order).
func check(v any, t reflect.Type, at []string) *keyError {
	t = derefType(t)
	if v == nil || t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			e := keyErrorf(at, "want keys (%s), not a value", takes(t))
			if t.Kind() == reflect.Map {
				e = keyErrorf(at, "want keys (name: value), not a value")
			}
			e.value = true
			return e
		}
		for _, k := range sortedKeys(m) {
			var ft reflect.Type
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else {
				f, ok := lookup(t, k)
				if !ok {
					return keyErrorf(append(at, k), "unknown key (%s takes %s)", section(at), takes(t))
				}
				ft = f.typ
			}
			if err := check(m[k], ft, append(at, k)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		list, ok := v.([]any)
		if s, isText := v.(string); isText && isValue(t.Elem()) { // comma-separated, as the decoder splits it
			list = nil
			for _, item := range strings.Split(s, ",") {
				list = append(list, item)
			}
		} else if !ok { // the decoder takes a single item as a list of one
			list = []any{v}
		}
		for i, item := range list {
			if err := check(item, t.Elem(), append(at, strconv.Itoa(i))); err != nil {
				return err
			}
		}
		return nil
	}
	return checkValue(v, t, at)
}

// checkValue decodes one value into t; the error says what was wanted.
func checkValue(v any, t reflect.Type, at []string) *keyError {
	err := decodeValue(v, t)
	if err == nil {
		return nil
	}
	var e *keyError
	switch v.(type) {
	case map[string]any:
		e = keyErrorf(at, "want %s, not keys", want(t))
	case []any:
		e = keyErrorf(at, "want %s, not a list", want(t))
	default:
		e = keyErrorf(at, "%s is not %s", api.Redact(strconv.Quote(fmt.Sprint(v))), want(t))
	}
	e.value, e.err = true, err
	return e
}

// override is one BRIDGE_ variable or --set flag.
type override struct {
	layer string   // "environment BRIDGE_API__POLL_INTERVAL", "--set api.poll_interval"
	path  []string // api, poll_interval
	value string
}

// envAliases are the variables `bridge api` reads, accepted here too.
var envAliases = map[string]string{
	"BRIDGE_API_BASE_URL": "api.base_url", "BRIDGE_API_KEY": "api.key", "BRIDGE_API_KEY_FILE": "api.key_file",
}

// envOverrides reads the BRIDGE_ variables that hold settings: those with "__" (nesting;
// BRIDGE_SOURCES__0__PATH) and the aliases. Single-level ones (BRIDGE_FAILPOINTS) are not
// settings. They are applied in path order, list indexes as numbers (so __2__ comes before
// __10__).
func envOverrides() []override {
	var out []override
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BRIDGE_") {
			continue
		}
		o := override{layer: "environment " + name, value: value}
		if alias, ok := envAliases[name]; ok {
			o.path = strings.Split(alias, ".")
		} else if strings.Contains(name, "__") {
			o.path = strings.Split(strings.ToLower(strings.TrimPrefix(name, "BRIDGE_")), "__")
		} else {
			continue
		}
		out = append(out, o)
	}
	slices.SortStableFunc(out, func(a, b override) int { return comparePaths(a.path, b.path) })
	return out
}

// comparePaths orders paths segment by segment, numbers by value.
func comparePaths(a, b []string) int {
	for i := range min(len(a), len(b)) {
		c := cmp.Compare(a[i], b[i])
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil {
			c = cmp.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// setOverrides parses --set key=value flags; keys are dotted (sources.0.path) and may write
// list indexes in brackets (sources[0].path).
func setOverrides(sets []string) ([]override, error) {
	var out []override
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--set %q: want key=value", api.Redact(s))
		}
		out = append(out, override{layer: "--set " + key, path: strings.Split(dotted(key), "."), value: value})
	}
	return out, nil
}

// apply sets o's value in tree, checking its key against the Config type, and records the
// layer in orig. The error names the layer and the key.
func (o override) apply(tree map[string]any, orig *origins) error {
	if slices.Contains(o.path, "") {
		return fmt.Errorf("%s: %q is not a key (an empty part)", o.layer, strings.Join(o.path, "."))
	}
	var added [][]string
	if _, err := setKey(tree, reflect.TypeFor[Config](), nil, o.path, o.value, &added); err != nil {
		return fmt.Errorf("%s: %w", o.layer, err)
	}
	for _, at := range added {
		orig.set(strings.Join(at, "."), o.layer)
	}
	orig.set(strings.Join(o.path, "."), o.layer)
	return nil
}

// setKey returns node with value set at rest, the remaining path below at; t is the type node
// decodes into (nil inside a connector's options, which have no fixed shape). A list item is
// addressed by its index, and the index one past the end adds an entry (listed in added).
// Struct keys are checked (the error names the unknown key and what its section takes).
func setKey(node any, t reflect.Type, at, rest []string, value string, added *[][]string) (any, error) {
	t = derefType(t)
	if len(rest) == 0 {
		if !isValue(t) {
			return nil, keyErrorf(at, "is a section, not a value: set its keys (%s)", takes(t))
		}
		return value, nil
	}
	key, next := rest[0], append(slices.Clone(at), rest[0])
	if t != nil && t.Kind() == reflect.Slice || t == nil && isList(node) {
		list, ok := node.([]any)
		if s, isText := node.(string); isText && s != "" {
			for _, item := range strings.Split(s, ",") { // a comma-separated list from an earlier layer
				list = append(list, item)
			}
		} else if !ok && node != nil {
			list = []any{node}
		}
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 {
			return nil, keyErrorf(next, "%s is a list: address an entry by its index (%s.0)", display(at), strings.Join(at, "."))
		}
		if i > len(list) {
			return nil, keyErrorf(next, "no such entry: %s has %d (%s.%d adds one)", display(at), len(list), strings.Join(at, "."), len(list))
		}
		if i == len(list) {
			list = append(list, nil)
			*added = append(*added, next)
		}
		var elem reflect.Type
		if t != nil {
			elem = t.Elem()
		}
		if list[i], err = setKey(list[i], elem, next, rest[1:], value, added); err != nil {
			return nil, err
		}
		return list, nil
	}
	if t != nil && t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Interface {
		return nil, keyErrorf(next, "unknown key: %s is a value, not a section", display(at))
	}
	m, ok := node.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	var child reflect.Type
	switch {
	case t == nil || t.Kind() == reflect.Interface:
	case t.Kind() == reflect.Map:
		child = t.Elem()
	default:
		f, ok := lookup(t, key)
		if !ok {
			return nil, keyErrorf(next, "unknown key (%s takes %s)", section(at), takes(t))
		}
		key, child = f.name, f.typ
	}
	for k := range m { // a key written in another case in the file is the same key
		if strings.EqualFold(k, key) {
			key = k
		}
	}
	v, err := setKey(m[key], child, next, rest[1:], value, added)
	if err != nil {
		return nil, err
	}
	m[key] = v
	return m, nil
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// filePositions records where each key (and its value) of the YAML document is written.
func filePositions(n *yaml.Node, at, label string, orig *origins) {
	join := func(k string) string {
		if at == "" {
			return strings.ToLower(k)
		}
		return at + "." + strings.ToLower(k)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			filePositions(c, at, label, orig)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge key: its keys are written elsewhere
				continue
			}
			p := join(k.Value)
			orig.at[p] = fmt.Sprintf("%s:%d:%d", label, k.Line, k.Column)
			orig.valueAt[p] = fmt.Sprintf("%s:%d:%d", label, v.Line, v.Column)
			filePositions(v, p, label, orig)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := join(strconv.Itoa(i))
			orig.at[p] = fmt.Sprintf("%s:%d:%d", label, c.Line, c.Column)
			filePositions(c, p, label, orig)
		}
	}
}

// yamlParses reports whether b parses the way the file is read (a mapping at the top).
func yamlParses(b []byte) error {
	var m map[string]any
	return yaml.Unmarshal(b, &m)
}

var yamlLinePrefix = regexp.MustCompile(`^yaml: (unmarshal errors:\s*)?(line \d+: )?`)

// yamlSyntaxError says where a file that does not parse goes wrong. yaml.v3 often names the
// line where the enclosing block began (or, for an unclosed quote, the end of the file), so
// the position is found again: the line is the one after the longest run of lines that
// parses, the column the first character from which no beginning of that line parses. ok is
// false when data parses.
func yamlSyntaxError(data []byte) (line, col int, msg string, ok bool) {
	if yamlParses(data) == nil {
		return 0, 0, "", false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	n := len(lines) - 1
	for n > 0 && yamlParses(bytes.Join(lines[:n], nil)) != nil {
		n--
	}
	head := bytes.Join(lines[:n], nil)
	text := strings.TrimRight(string(lines[n]), "\r\n")
	with := func(s string) []byte { return append(slices.Clone(head), s...) }
	c := len(text)
	for c > 0 && yamlParses(with(text[:c])) != nil {
		c--
	}
	for c < len(text) && text[c] == ' ' {
		c++
	}
	indent := len(text) - len(strings.TrimLeft(text, " \t"))
	if i := strings.IndexByte(text[:indent], '\t'); i >= 0 {
		c = i
	}
	err := yamlParses(with(text))
	if err == nil {
		err = yamlParses(data)
	}
	msg = yamlLinePrefix.ReplaceAllString(err.Error(), "")
	msg, _, _ = strings.Cut(msg, "\n")
	switch {
	case c < len(text) && (text[c] == '"' || text[c] == '\'') && strings.Contains(msg, "end of stream"):
		msg = fmt.Sprintf("unclosed quote (%c)", text[c])
	case strings.Contains(msg, "cannot unmarshal"):
		msg = "the file must hold keys (api:, store:, sources:, …) at the top: " + msg
	case c == indent && (strings.Contains(msg, "did not find expected") || strings.Contains(msg, "could not find expected")):
		msg += " (check the indentation)"
	case strings.Contains(msg, "mapping values are not allowed"):
		msg += " (a line indented too far, or a value holding \": \" that needs quotes)"
	}
	return n + 1, utf8.RuneCountInString(text[:c]) + 1, msg, true
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
