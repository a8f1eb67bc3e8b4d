package gdrive

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"
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
