package connectors

import (
	"errors"
	"fmt"
	"path"
)

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

// ErrRequired is what an OptionError wraps when its option must be set and is not; the
// configuration reference marks such options required.
var ErrRequired = errors.New("required")

// Required returns an *OptionError naming key when value is empty, else nil.
func Required(key, value string) error {
	if value == "" {
		return &OptionError{Key: key, Err: ErrRequired}
	}
	return nil
}

// Globs are path.Match patterns, matched against a path and its base name.
type Globs []string

// Validate returns the first malformed pattern's error, or nil.
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

// CheckOption returns Validate's error as an *OptionError naming key, or nil.
func (g Globs) CheckOption(key string) error {
	if err := g.Validate(); err != nil {
		return &OptionError{Key: key, Err: err}
	}
	return nil
}
