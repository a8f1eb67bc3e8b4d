package gdrive

import (
	"context"
	"errors"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/retry"
)

// retry runs fn under the module's retry policy (internal/retry): 403 rateLimitExceeded or
// userRateLimitExceeded, 429 and 5xx are tried again, up to MaxAttempts, backing off
// exponentially from MinBackoff up to 32 s with full jitter as Drive asks, or after Drive's
// Retry-After when it names one (a wait over 2 minutes is returned at once, for the bridge to
// schedule); other failures are returned at once.
func (s *Source) retry(ctx context.Context, fn func() error) error {
	p := retry.Policy{MaxAttempts: s.cfg.MaxAttempts, MinBackoff: s.cfg.MinBackoff, MaxBackoff: 32 * time.Second,
		MaxRetryAfter: 2 * time.Minute}
	return p.Do(ctx, func() error {
		err := fn()
		if err == nil || !throttled(err) {
			return retry.Permanent(err)
		}
		return retry.After(err, s.retryAfter(err))
	})
}

// retryAfter is the wait a Drive error answer names in its Retry-After, zero when none.
func (s *Source) retryAfter(err error) time.Duration {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return 0
	}
	return connectors.RetryAfter(ge.Header.Get("Retry-After"), s.cfg.Now())
}

func throttled(err error) bool {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return false
	}
	switch {
	case ge.Code == http.StatusTooManyRequests, ge.Code >= 500:
		return true
	case ge.Code == http.StatusForbidden:
		for _, e := range ge.Errors {
			if e.Reason == "rateLimitExceeded" || e.Reason == "userRateLimitExceeded" {
				return true
			}
		}
	}
	return false
}

// classify marks a failed download as transient when it may pass: throttled (429, 5xx, 403
// rate limits; with Drive's Retry-After), a network failure, or a token endpoint answering 429
// or 5xx. A refusal about the account or a spent quota holds the job (refusal); other
// refusals stay permanent, with what Drive's reason means when it says little.
func (s *Source) classify(ctx context.Context, err error) error {
	var ge *googleapi.Error
	var re *oauth2.RetrieveError
	switch {
	case ctx.Err() != nil:
		return err
	case errors.As(err, &ge):
		if throttled(err) {
			return connectors.Transient(err, s.retryAfter(err))
		}
		return refusal(ge, err)
	case errors.As(err, &re):
		if re.Response != nil && connectors.TransientStatus(re.Response.StatusCode) {
			return connectors.Transient(err, 0)
		}
		return err
	case connectors.NetFailure(err):
		return connectors.Transient(err, 0)
	}
	return err
}
