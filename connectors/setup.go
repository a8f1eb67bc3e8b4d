package connectors

import (
	"errors"
	"strings"
)

// SetupError is a Check failure that names its fix: a permission to grant, a policy to create,
// an option to set. bridge doctor and bridge sources check print the fix beside the problem.
type SetupError struct {
	// Err is the problem, with what was checked and the service's own words.
	Err error
	// Fix says what the operator does about it, in a sentence.
	Fix string
}

// Error returns the problem followed by its fix.
func (e *SetupError) Error() string { return e.Err.Error() + " (fix: " + e.Fix + ")" }

// Unwrap returns the problem.
func (e *SetupError) Unwrap() error { return e.Err }

// NeedsSetup marks err, a Check failure, with the fix that clears it. It returns nil for a nil
// err.
func NeedsSetup(err error, fix string) error {
	if err == nil {
		return nil
	}
	return &SetupError{Err: err, Fix: fix}
}

// SetupFix returns the fix named by a SetupError in err's chain, and the problem without it;
// ok is false when err holds none.
func SetupFix(err error) (problem, fix string, ok bool) {
	var se *SetupError
	if !errors.As(err, &se) {
		return "", "", false
	}
	return se.Err.Error(), se.Fix, true
}

// warnPrefix begins a Check line that is a warning: the source works, but something is missed
// or will fail later (a permission an option needs, a history it cannot reach).
const warnPrefix = "warning: "

// Warning returns a Check line saying problem, with its fix, that bridge doctor shows as a
// warning of its own rather than as part of the source's ok line.
func Warning(problem, fix string) string {
	return warnPrefix + problem + " (fix: " + fix + ")"
}

// ParseWarning reports whether a Check line is a Warning, and its problem and fix.
func ParseWarning(line string) (problem, fix string, ok bool) {
	rest, ok := strings.CutPrefix(line, warnPrefix)
	if !ok {
		return "", "", false
	}
	if i := strings.LastIndex(rest, " (fix: "); i >= 0 && strings.HasSuffix(rest, ")") {
		return rest[:i], rest[i+len(" (fix: ") : len(rest)-1], true
	}
	return rest, "", true
}
