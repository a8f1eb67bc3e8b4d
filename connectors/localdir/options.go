package localdir

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// parseOptions reads a source's options from configuration: path, recursive, include, exclude,
// stable_for, move_finished. Unknown options and wrong types are errors naming the option.
func parseOptions(opts map[string]any) (Config, error) {
	cfg := Config{Recursive: true, StableFor: 5 * time.Second}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		var err error
		switch k {
		case "path":
			cfg.Path, err = str(v)
		case "recursive":
			cfg.Recursive, err = boolean(v)
		case "include":
			cfg.Include, err = strs(v)
		case "exclude":
			cfg.Exclude, err = strs(v)
		case "move_finished":
			cfg.MoveFinished, err = boolean(v)
		case "stable_for":
			var s string
			if s, err = str(v); err == nil {
				cfg.StableFor, err = time.ParseDuration(s)
			}
		default:
			return cfg, fmt.Errorf("unknown option %q (localdir takes path, recursive, include, exclude, stable_for, move_finished)", k)
		}
		if err != nil {
			return cfg, fmt.Errorf("option %s: %w", k, err)
		}
	}
	if cfg.Path == "" {
		return cfg, fmt.Errorf("option path: required")
	}
	return cfg, nil
}

func str(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case fmt.Stringer:
		return s.String(), nil
	}
	return "", fmt.Errorf("%v is not a string", v)
}

func boolean(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true", "yes", "1":
			return true, nil
		case "false", "no", "0":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not true or false", v)
}

func strs(v any) ([]string, error) {
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, err := str(x)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case string:
		return strings.Split(l, ","), nil
	}
	return nil, fmt.Errorf("%v is not a list", v)
}
