package connectors

import (
	"errors"
	"net/http"
	"strings"
	"time"
)

// ErrBlocked is wrapped by a source refusal about the account rather than the recording, which
// lasts until someone acts or a quota renews: the source asks for payment (402 Payment Required,
// such as Graph's "Evaluation capacity for the month has exceeded"), a licence or an access
// policy is missing (a 403 saying so), a daily download quota is spent (Drive's
// downloadQuotaExceeded). The recording itself is fine, so the bridge never skips or fails it:
// the job is held with the source's message, tried again after the wait the refusal names (a
// day by default) and at once when released by hand (bridge jobs release). Make one with
// Blocked.
var ErrBlocked = errors.New("source refuses until its account is set up")

// DefaultBlockedWait is how long a job held by a Blocked refusal that names no wait waits
// before it is tried again: a day, as quotas and billing renew.
const DefaultBlockedWait = 24 * time.Hour

// BlockedError is a source refusal that waits on someone (see ErrBlocked); errors.Is(err,
// ErrBlocked) matches it.
type BlockedError struct {
	// Err is the refusal, with the operation, the item and the service's own message.
	Err error
	// RetryAfter is when to try again; zero means DefaultBlockedWait.
	RetryAfter time.Duration
}

// Error returns the refusal's message, unchanged.
func (e *BlockedError) Error() string { return e.Err.Error() }

// Unwrap returns ErrBlocked and the refusal.
func (e *BlockedError) Unwrap() []error { return []error{ErrBlocked, e.Err} }

// Blocked marks err as a refusal about the account that lasts until someone acts or a quota
// renews, to be tried again after retryAfter (0: DefaultBlockedWait). It returns nil for a nil
// err.
func Blocked(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &BlockedError{Err: err, RetryAfter: retryAfter}
}

// BlockedWait returns how long a job held by the Blocked refusal in err's chain waits before
// it is tried again (DefaultBlockedWait when the refusal named none), and zero when err holds
// no such refusal.
func BlockedWait(err error) time.Duration {
	var be *BlockedError
	if !errors.As(err, &be) {
		return 0
	}
	if be.RetryAfter <= 0 {
		return DefaultBlockedWait
	}
	return be.RetryAfter
}

// licenceWords are what a 403's error says when a licence, a subscription or an access policy
// is missing, rather than the caller lacking a permission on the item. Graph: "…requires a
// license…", "No application access policy found for this app"; Zoom: "…does not have a paid
// license…", "…plan…".
var licenceWords = []string{"licen", "subscription", "access policy", "accesspolicy", "billing", "payment", "paid plan"}

// BlockedStatus reports whether an HTTP answer of a source is a refusal about the account (see
// ErrBlocked): every 402, and a 403 whose error (code or message, in any case) says a licence,
// a subscription, billing or an access policy is missing.
func BlockedStatus(status int, message string) bool {
	switch status {
	case http.StatusPaymentRequired:
		return true
	case http.StatusForbidden:
		m := strings.ToLower(message)
		for _, w := range licenceWords {
			if strings.Contains(m, w) {
				return true
			}
		}
	}
	return false
}
