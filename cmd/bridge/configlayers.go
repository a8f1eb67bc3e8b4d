package main

// The configuration's layers: the file (or the built-in default), BRIDGE_ variables and --set
// flags are merged into one tree of maps and lists, remembering which layer set each key so
// that an error names the file position, the variable or the flag at fault. Variables and
// flags address list items by index (sources.0.path, BRIDGE_SOURCES__0__PATH); the index one
// past the end adds an entry.

import (
	"cmp"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

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
