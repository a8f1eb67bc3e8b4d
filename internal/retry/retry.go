// Package retry is the one retry policy of the module's clients (the transcription API and its
// uploads, Zoom, Google Drive), on github.com/cenkalti/backoff/v5: exponential backoff with full
// jitter, bounded by attempts and by elapsed time; a Retry-After carried by the failure is
// waited (plus jitter), and one longer than a cap is returned at once; failures marked Permanent
// are returned at once; a context end stops the waiting and is returned with the last failure.
// ParseAfter is the one Retry-After parser.
//
// The operation classifies its own failures, since only it knows its protocol: it returns
// Permanent(err) for a failure that another attempt cannot fix, After(err, d) for one that
// names its wait, Within(err, d) to bound the next wait (a deadline of its own), and a plain
// error for one worth another attempt after the backoff.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Policy says how often and how long an operation is tried. The zero value tries once.
type Policy struct {
	// MaxAttempts bounds the tries, the first included (less than 1: one try).
	MaxAttempts int
	// MinBackoff is the ceiling of the first wait; the ceiling doubles with every retry up to
	// MaxBackoff, and each wait is drawn uniformly from zero to the ceiling (full jitter).
	MinBackoff, MaxBackoff time.Duration
	// MaxElapsed stops the retries once the next attempt would start later than this after the
	// first one (0: no bound).
	MaxElapsed time.Duration
	// MaxRetryAfter is the longest Retry-After waited inside one call: a failure asking for
	// more (a daily quota pointing to midnight) is returned at once (0: no cap).
	MaxRetryAfter time.Duration
}

// ExhaustedError is the failure of an operation whose attempts (or elapsed time) ran out; it
// wraps the last failure.
type ExhaustedError struct {
	// Attempts is how many tries were made.
	Attempts int
	// Err is the last failure.
	Err error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("giving up after %d attempts: %v", e.Attempts, e.Err)
}

// Unwrap returns the last failure.
func (e *ExhaustedError) Unwrap() error { return e.Err }

// Do calls op until it succeeds, fails with a Permanent error (returned unmarked), asks for a
// wait longer than MaxRetryAfter (returned unmarked), or the attempts or MaxElapsed run out
// (*ExhaustedError). When ctx ends first, the context's error is returned, naming the last
// failure when there was one.
func (p Policy) Do(ctx context.Context, op func() error) error {
	b := &jitter{p: p}
	attempts := 0
	final := false // the last failure was returned at once
	var last error // the last failure that was not the context ending
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		attempts++
		err := op()
		if err == nil {
			return struct{}{}, nil
		}
		b.last = err
		if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
			last = Unmark(err)
		}
		m := marks(err)
		if final = m.permanent || p.MaxRetryAfter > 0 && m.after > p.MaxRetryAfter; final {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(b), backoff.WithMaxTries(uint(max(1, p.MaxAttempts))), backoff.WithMaxElapsedTime(p.MaxElapsed))
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx))):
		if last != nil {
			return fmt.Errorf("%w (last failure: %v)", ctx.Err(), last)
		}
		return ctx.Err()
	case final:
		return Unmark(b.last)
	}
	return &ExhaustedError{Attempts: attempts, Err: Unmark(b.last)}
}

// Delay is the wait before retry number attempt (1 for the first retry): drawn from zero to
// MinBackoff<<(attempt-1), at most MaxBackoff; after a Retry-After, that wait plus up to
// MinBackoff of jitter.
func (p Policy) Delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter + rand.N(max(0, p.MinBackoff)+1)
	}
	ceiling := p.MinBackoff << min(max(attempt-1, 0), 20)
	if ceiling > p.MaxBackoff || ceiling <= 0 {
		ceiling = p.MaxBackoff
	}
	return rand.N(max(0, ceiling) + 1)
}

// jitter is the backoff.BackOff of a Policy: it reads the marks of the last failure.
type jitter struct {
	p    Policy
	n    int
	last error
}

func (j *jitter) Reset() { j.n = 0 }

func (j *jitter) NextBackOff() time.Duration {
	j.n++
	m := marks(j.last)
	d := j.p.Delay(j.n, m.after)
	if m.bounded {
		d = max(0, min(d, m.within))
	}
	return d
}

// mark is a failure with what the operation says of it.
type mark struct {
	err       error
	permanent bool
	after     time.Duration // > 0: wait at least this before the next attempt
	within    time.Duration // with bounded: wait at most this
	bounded   bool
}

func (m *mark) Error() string { return m.err.Error() }
func (m *mark) Unwrap() error { return m.err }

// Permanent marks err as a failure that another attempt cannot fix. Nil stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &mark{err: err, permanent: true}
}

// After marks err as a failure that names its wait (a Retry-After): the next attempt comes no
// sooner than d (plus jitter). A d of zero or less names no wait. Nil stays nil.
func After(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &mark{err: err, after: d}
}

// Within bounds the wait before the next attempt to d (a deadline of the caller's own, such as
// how long a host may stay unreachable). Nil stays nil.
func Within(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &mark{err: err, within: d, bounded: true}
}

// marks gathers the marks anywhere in err's chain; the outermost of each kind wins.
func marks(err error) mark {
	var got mark
	for err != nil {
		var m *mark
		if !errors.As(err, &m) {
			break
		}
		got.permanent = got.permanent || m.permanent
		if got.after == 0 {
			got.after = m.after
		}
		if !got.bounded && m.bounded {
			got.within, got.bounded = m.within, true
		}
		err = m.err
	}
	return got
}

// Unmark returns err without the marks wrapped around it (marks deeper in a chain stay: they
// do not change its text or what errors.Is and errors.As find).
func Unmark(err error) error {
	for {
		m, ok := err.(*mark)
		if !ok {
			return err
		}
		err = m.err
	}
}

// ParseAfter reads a Retry-After value: whole seconds or an HTTP date (relative to now). ok is
// false when the value is absent or unreadable (negative seconds included); a date in the past
// is zero. Callers apply their own caps.
func ParseAfter(value string, now time.Time) (d time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(1<<62/time.Second))) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(0, t.Sub(now)), true
}
