package meet

import (
	"context"
	"errors"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/retry"
)

// retry runs a Meet call under the module's retry policy (internal/retry): 429
// (RESOURCE_EXHAUSTED) and 5xx are tried again, up to MaxAttempts, backing off exponentially
// from MinBackoff up to 32 s with full jitter, or after the answer's Retry-After (a wait over 2
// minutes is returned at once: the next sweep tries again); other failures are returned at
// once.
func (s *Source) retry(ctx context.Context, fn func() error) error {
	p := retry.Policy{MaxAttempts: s.cfg.MaxAttempts, MinBackoff: s.cfg.MinBackoff, MaxBackoff: 32 * time.Second,
		MaxRetryAfter: 2 * time.Minute}
	return p.Do(ctx, func() error {
		err := fn()
		var ge *googleapi.Error
		if err == nil || !errors.As(err, &ge) || !(ge.Code == http.StatusTooManyRequests || ge.Code >= 500) {
			return retry.Permanent(err)
		}
		return retry.After(err, connectors.RetryAfter(ge.Header.Get("Retry-After"), s.cfg.Now()))
	})
}

// status is the HTTP status of the Google API error in err's chain, 0 when there is none.
func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
