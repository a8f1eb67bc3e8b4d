package main

// Checking the merged tree against the Config type: every key known, every value of its type.

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"

	"github.com/transcript-bridge/bridge/api"
)

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
		if name == "-" { // set in Go only (a webhook's secrets, read from secret_file)
			continue
		}
		if opts == "squash" && f.Type.Kind() == reflect.Struct { // its keys are the section's own
			out = append(out, fieldsOf(f.Type)...)
			continue
		}
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

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
