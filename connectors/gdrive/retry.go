package gdrive

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/transcript-bridge/bridge/connectors"
)

// retry runs fn until it succeeds, fails for good, or MaxAttempts pass: 403 rateLimitExceeded
// or userRateLimitExceeded, 429 and 5xx back off exponentially from MinBackoff up to 32 s
// with full jitter, as Drive asks.
func (s *Source) retry(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !throttled(err) || attempt >= s.cfg.MaxAttempts {
			return err
		}
		ceiling := min(32*time.Second, s.cfg.MinBackoff<<(attempt-1))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(ceiling) + time.Millisecond):
		}
	}
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
// or 5xx. Other refusals stay permanent.
func (s *Source) classify(ctx context.Context, err error) error {
	var ge *googleapi.Error
	var re *oauth2.RetrieveError
	switch {
	case ctx.Err() != nil:
		return err
	case errors.As(err, &ge):
		if throttled(err) {
			return connectors.Transient(err, connectors.RetryAfter(ge.Header.Get("Retry-After"), s.cfg.Now()))
		}
		return err
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
