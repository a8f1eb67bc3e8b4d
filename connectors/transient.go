package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/transcript-bridge/bridge/internal/retry"
)

// ErrTransient is wrapped by a source failure that may pass by itself: the source answered
// 5xx or 429, an HTML page instead of the file (Zoom, while a recording is still processing), a
// body shorter than the item's size, or the connection failed or was reset. The bridge
// retries such a job with backoff and holds it (never skips it) once the source's retry
// deadline has passed. Any other error of Source.Open is permanent: the job is skipped with it.
var ErrTransient = errors.New("source temporarily unavailable")

// TransientError is a source failure that may pass; errors.Is(err, ErrTransient) matches it.
// Make one with Transient.
type TransientError struct {
	// Err is the failure, with the operation and the item.
	Err error
	// RetryAfter is the wait the source asked for (its Retry-After), zero when it named none.
	RetryAfter time.Duration
}

// Error returns the failure's message, unchanged.
func (e *TransientError) Error() string { return e.Err.Error() }

// Unwrap returns ErrTransient and the failure.
func (e *TransientError) Unwrap() []error { return []error{ErrTransient, e.Err} }

// Transient marks err as a source failure that may pass, with the wait the source asked for
// (0: none). It returns nil for a nil err.
func Transient(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err, RetryAfter: retryAfter}
}

// TransientWait returns the wait a transient source failure in err's chain asked for, or zero
// when there is none.
func TransientWait(err error) time.Duration {
	var te *TransientError
	if errors.As(err, &te) {
		return te.RetryAfter
	}
	return 0
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date, relative to now, with
// internal/retry.ParseAfter); it returns zero when the value is absent or unreadable, and at
// most a day.
func RetryAfter(value string, now time.Time) time.Duration {
	d, _ := retry.ParseAfter(value, now)
	return min(d, 24*time.Hour)
}

// NetFailure reports whether err is a network failure that may pass: a reset, refused or timed
// out connection, a connection closed before the answer or in the middle of a body. It is false
// for a cancelled context and for errors of other kinds (a bad URL, a refusal).
func NetFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var op *net.OpError
	var dns *net.DNSError
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &op), errors.As(err, &dns):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, syscall.ECONNREFUSED):
		return true
	case errors.As(err, &ue) && errors.Is(ue.Err, io.EOF): // closed before the answer
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	return false
}

// ExactBody wraps a download that must hold exactly want bytes (want <= 0: not known): a read
// that fails (a reset, a timeout, an I/O error) or a body that ends early fails with a
// transient error naming what (the source and item), so the job is retried rather than skipped
// or uploaded short; a body longer than want fails too. Errors are sticky.
func ExactBody(rc io.ReadCloser, want int64, what string) io.ReadCloser {
	return &exactBody{rc: rc, want: want, what: what}
}

type exactBody struct {
	rc   io.ReadCloser
	want int64
	n    int64
	what string
	err  error
}

func (e *exactBody) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.rc.Read(p)
	e.n += int64(n)
	switch {
	case e.want > 0 && e.n > e.want:
		e.err = Transient(fmt.Errorf("%s: more than the %d bytes announced", e.what, e.want), 0)
	case err == io.EOF && e.want > 0 && e.n < e.want:
		e.err = Transient(fmt.Errorf("%s: %d of %d bytes (cut short)", e.what, e.n, e.want), 0)
	case err != nil && err != io.EOF:
		var te *TransientError
		if errors.As(err, &te) {
			e.err = err // already classified by the source
		} else {
			e.err = Transient(fmt.Errorf("%s: reading after %d bytes: %w", e.what, e.n, err), 0)
		}
	default:
		return n, err
	}
	return n, e.err
}

func (e *exactBody) Close() error { return e.rc.Close() }
