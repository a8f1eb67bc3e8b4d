package api

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/transcript-bridge/bridge/internal/retry"
)

// ErrUnreachable is wrapped by the error of a call that could not connect to the API at all
// (connection refused, no such host, no route) for Config.UnreachableTimeout. Callers that
// keep running (bridge run) wait and try again; one-shot commands report it and exit.
var ErrUnreachable = errors.New("API unreachable")

// UnreachableError says which base URL could not be reached, how long the client tried and
// the last transport failure. errors.Is(err, ErrUnreachable) matches it.
type UnreachableError struct {
	// URL is the client's base URL.
	URL string
	// Attempts is how many connections were tried.
	Attempts int
	// For is how long the client tried.
	For time.Duration
	// Err is the last transport failure.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the API at %s (%v; %d attempt(s) in %s): check api.base_url and that the service is up",
		e.URL, cause(e.Err), e.Attempts, e.For.Round(100*time.Millisecond))
}

// Unwrap returns ErrUnreachable and the transport failure.
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// cause is the innermost readable reason of a transport failure ("connect: connection
// refused", "lookup api.example: no such host"), without the request line resty adds.
func cause(err error) error {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}

// unreachable reports whether a transport failure means no connection could be made at all:
// nothing listens, the name does not resolve, or there is no route. Resets and timeouts of a
// connection that was made are not this (the server is there and may answer next time).
func unreachable(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// reachability tracks, within one call, since when every attempt failed to connect.
type reachability struct {
	since    time.Time
	attempts int
}

// fail records an attempt's transport failure. It returns the UnreachableError once the
// connections have failed for limit; nil while the call may try again (or for other errors,
// which reset the count).
func (r *reachability) fail(err error, base string, limit time.Duration) error {
	if !unreachable(err) {
		r.since, r.attempts = time.Time{}, 0
		return nil
	}
	if r.since.IsZero() {
		r.since = time.Now()
	}
	r.attempts++
	if d := time.Since(r.since); d >= limit {
		return &UnreachableError{URL: base, Attempts: r.attempts, For: d, Err: err}
	}
	return nil
}

// bound marks a transport failure for the retry policy so that the call gives up on time when
// connections keep failing: the next attempt comes no later than the end of the limit.
func (r *reachability) bound(err error, limit time.Duration) error {
	if r.since.IsZero() {
		return err
	}
	return retry.Within(err, limit-time.Since(r.since))
}
