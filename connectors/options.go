package connectors

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Options reads a source's options from configuration. Each getter records the key as known;
// Err then reports the first bad value or unknown option, naming it.
type Options struct {
	m     map[string]any
	known []string
	err   error
}

// NewOptions wraps a source's options.
func NewOptions(m map[string]any) *Options { return &Options{m: m} }

func (o *Options) get(key string) (any, bool) {
	o.known = append(o.known, key)
	v, ok := o.m[key]
	return v, ok && v != nil
}

func (o *Options) fail(key string, err error) {
	if o.err == nil {
		o.err = &OptionError{Key: key, Err: err}
	}
}

// OptionError is a source option that is unknown or has a bad value; Key names it as written
// in the configuration, so the caller can say where it was set.
type OptionError struct {
	// Key is the option ("stable_for").
	Key string
	// Err says what is wrong with it.
	Err error
	// Unknown is set when the source takes no such option (rather than a bad value).
	Unknown bool
}

func (e *OptionError) Error() string {
	if e.Unknown {
		return e.Err.Error()
	}
	return fmt.Sprintf("option %s: %v", e.Key, e.Err)
}

// Unwrap returns what is wrong.
func (e *OptionError) Unwrap() error { return e.Err }

// String returns the option key, or def when it is not set.
func (o *Options) String(key, def string) string {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	switch s := v.(type) {
	case string:
		return s
	case fmt.Stringer:
		return s.String()
	}
	o.fail(key, fmt.Errorf("%v is not a string", v))
	return def
}

// Bool returns the option key (true/false, yes/no, 1/0), or def when it is not set.
func (o *Options) Bool(key string, def bool) bool {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		switch strings.ToLower(b) {
		case "true", "yes", "1":
			return true
		case "false", "no", "0":
			return false
		}
	}
	o.fail(key, fmt.Errorf("%v is not true or false", v))
	return def
}

// Int returns the option key, or def when it is not set.
func (o *Options) Int(key string, def int64) int64 {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		if n == float64(int64(n)) {
			return int64(n)
		}
	case string:
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i
		}
	}
	o.fail(key, fmt.Errorf("%v is not a whole number", v))
	return def
}

// Duration returns the option key ("30s", "5m"), or def when it is not set.
func (o *Options) Duration(key string, def time.Duration) time.Duration {
	s := o.String(key, "")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		o.fail(key, err)
		return def
	}
	return d
}

// Strings returns the option key as a list (a YAML list or a comma-separated string).
func (o *Options) Strings(key string) []string {
	v, ok := o.get(key)
	if !ok {
		return nil
	}
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				o.fail(key, fmt.Errorf("item %d: %v is not a string", i, x))
				return nil
			}
			out[i] = s
		}
		return out
	case string:
		if l == "" {
			return nil
		}
		return strings.Split(l, ",")
	}
	o.fail(key, fmt.Errorf("%v is not a list", v))
	return nil
}

// Globs returns the option key as globs, checked for syntax.
func (o *Options) Globs(key string) Globs {
	g := Globs(o.Strings(key))
	if err := g.Validate(); err != nil {
		o.fail(key, err)
	}
	return g
}

// Required records an error when key was not given.
func (o *Options) Required(key string) {
	if v, ok := o.m[key]; !ok || v == nil || v == "" {
		o.fail(key, errors.New("required"))
	}
}

// Err returns the first bad value, else the first option that no getter asked for (naming the
// options typ takes).
func (o *Options) Err(typ string) error {
	if o.err != nil {
		return o.err
	}
	known := map[string]bool{}
	for _, k := range o.known {
		known[k] = true
	}
	var unknown []string
	for k := range o.m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := append([]string(nil), o.known...)
		sort.Strings(names)
		return &OptionError{Key: unknown[0], Unknown: true, Err: fmt.Errorf("unknown option %q (%s takes %s)", unknown[0], typ, strings.Join(names, ", "))}
	}
	return nil
}

// Globs are path.Match patterns, matched against a path and its base name.
type Globs []string

// Validate reports the first malformed pattern.
func (g Globs) Validate() error {
	for _, p := range g {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("glob %q: %w", p, err)
		}
	}
	return nil
}

// Match reports whether name (a slash-separated path) or its base name matches a pattern.
func (g Globs) Match(name string) bool {
	for _, p := range g {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
		if ok, _ := path.Match(p, path.Base(name)); ok {
			return true
		}
	}
	return false
}

// Wanted applies include (empty keeps everything) and then exclude to name.
func Wanted(include, exclude Globs, name string) bool {
	if len(include) > 0 && !include.Match(name) {
		return false
	}
	return !exclude.Match(name)
}
