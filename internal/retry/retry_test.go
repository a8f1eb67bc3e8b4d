package retry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

var errFlaky = errors.New("503 flaky")

// failing returns an operation that fails with the errors in turn (the last repeats), and
// succeeds from call succeedAfter+1 on when succeedAfter is positive; n counts the calls.
func failing(n *int, succeedAfter int, errs ...error) func() error {
	return func() error {
		*n++
		if succeedAfter > 0 && *n > succeedAfter {
			return nil
		}
		return errs[min(*n-1, len(errs)-1)]
	}
}

func TestDo(t *testing.T) {
	fast := Policy{MaxAttempts: 4, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	ctx := context.Background()
	tests := []struct {
		name     string
		p        Policy
		op       func(n *int) func() error
		attempts int
		want     func(error) bool
	}{
		{"success after failures", fast, func(n *int) func() error { return failing(n, 2, errFlaky) }, 3,
			func(err error) bool { return err == nil }},
		{"exhausted", fast, func(n *int) func() error { return failing(n, 0, errFlaky) }, 4,
			func(err error) bool {
				var ex *ExhaustedError
				return errors.As(err, &ex) && ex.Attempts == 4 && errors.Is(err, errFlaky) &&
					err.Error() == "giving up after 4 attempts: 503 flaky"
			}},
		{"permanent at once, unmarked", fast, func(n *int) func() error { return failing(n, 0, Permanent(errFlaky)) }, 1,
			func(err error) bool { return err == errFlaky }},
		{"permanent deeper in the chain", fast, func(n *int) func() error {
			return failing(n, 0, fmt.Errorf("get x: %w", Permanent(errFlaky)))
		}, 1, func(err error) bool { return err.Error() == "get x: 503 flaky" }},
		{"permanent on the last attempt", Policy{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			func(n *int) func() error { return failing(n, 0, errFlaky, Permanent(errFlaky)) }, 2,
			func(err error) bool { return err == errFlaky }},
		{"a Retry-After beyond the cap is returned at once", Policy{MaxAttempts: 4, MaxRetryAfter: time.Second},
			func(n *int) func() error { return failing(n, 0, After(errFlaky, time.Hour)) }, 1,
			func(err error) bool { return err == errFlaky }},
		{"one try when MaxAttempts is unset", Policy{}, func(n *int) func() error { return failing(n, 0, errFlaky) }, 1,
			func(err error) bool { return errors.Is(err, errFlaky) }},
		{"max elapsed", Policy{MaxAttempts: 100, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxElapsed: 35 * time.Millisecond},
			func(n *int) func() error { return failing(n, 0, After(errFlaky, 20*time.Millisecond)) }, 2,
			func(err error) bool { return errors.Is(err, errFlaky) }},
	}
	for _, tc := range tests {
		n := 0
		err := tc.p.Do(ctx, tc.op(&n))
		if n != tc.attempts || !tc.want(err) {
			t.Errorf("%s: %d attempts, err %v; want %d attempts", tc.name, n, err, tc.attempts)
		}
	}
}

// TestDoWaits: a Retry-After is waited in full; Within bounds a long backoff.
func TestDoWaits(t *testing.T) {
	ctx := context.Background()
	n := 0
	start := time.Now()
	p := Policy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxRetryAfter: time.Second}
	if err := p.Do(ctx, failing(&n, 1, After(errFlaky, 200*time.Millisecond))); err != nil || time.Since(start) < 200*time.Millisecond {
		t.Errorf("Retry-After 200ms: err %v after %v, want success after the wait", err, time.Since(start))
	}
	n, start = 0, time.Now()
	p = Policy{MaxAttempts: 3, MinBackoff: time.Hour, MaxBackoff: time.Hour}
	if err := p.Do(ctx, failing(&n, 2, Within(errFlaky, 10*time.Millisecond))); err != nil || time.Since(start) > 5*time.Second {
		t.Errorf("Within 10ms of an hour's backoff: err %v after %v, want success at once", err, time.Since(start))
	}
}

// TestDoContext: a context end stops the wait and names the last failure; a failure caused by
// the context itself is not named as the last failure.
func TestDoContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n := 0
	p := Policy{MaxAttempts: 10, MinBackoff: time.Hour, MaxBackoff: time.Hour}
	err := p.Do(ctx, failing(&n, 0, errFlaky))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last failure: 503 flaky") || n != 1 {
		t.Errorf("deadline during the backoff = %v after %d attempts, want DeadlineExceeded naming the last failure", err, n)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	err = p.Do(done, func() error { return fmt.Errorf("send: %w", done.Err()) })
	if err != context.Canceled {
		t.Errorf("a first attempt failing with the context = %v, want context.Canceled alone", err)
	}
}

func TestDelay(t *testing.T) {
	p := Policy{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for attempt := 1; attempt < 30; attempt++ {
		ceiling := min(time.Second, 100*time.Millisecond<<(attempt-1))
		for range 50 {
			if d := p.Delay(attempt, 0); d < 0 || d > ceiling {
				t.Fatalf("Delay(%d) = %v, want within [0, %v]", attempt, d, ceiling)
			}
		}
	}
	for range 50 {
		if d := p.Delay(1, 3*time.Second); d < 3*time.Second || d > 3*time.Second+100*time.Millisecond {
			t.Fatalf("Delay with Retry-After 3s = %v, want 3s plus jitter up to the min backoff", d)
		}
	}
}

func TestParseAfter(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, false},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true},
		{"36000", 10 * time.Hour, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Fri, 20 Nov 2026 09:00:07 GMT", 7 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true}, // past: at once
		{"-3", 0, false},
		{"soon", 0, false},
		{"99999999999999999999", 0, false},
	} {
		if got, ok := ParseAfter(tc.value, now); got != tc.want || ok != tc.ok {
			t.Errorf("ParseAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}
