package zoom

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/internal/retry"
)

// dailyLimitError is Zoom's 429 for a spent daily limit: every call of its category is refused
// until the limit resets at 00:00 UTC, so another attempt before then is futile. Zoom's rate
// limits (https://developers.zoom.us/docs/api/rest/rate-limits/) mark it "X-RateLimit-Type:
// Daily-limit" with "Retry-After: 2020-05-31T00:00:00Z" (RFC 3339); answers without those
// headers were seen, whose message says "You have exceeded the daily rate limit … You may
// resume these requests at GMT 00:00:00"
// (https://devforum.zoom.us/t/zoom-api-create-meeting-api-rate-limit-sample-error-when-breaching-limit/18928).
type dailyLimitError struct {
	err   error
	until time.Time
}

// Error names the refusal and when the limit resets.
func (e *dailyLimitError) Error() string {
	return fmt.Sprintf("%v (Zoom's daily limit is spent until %s)", e.err, e.until.UTC().Format(time.RFC3339))
}

// Unwrap returns Zoom's refusal.
func (e *dailyLimitError) Unwrap() error { return e.err }

// dailyReset reports whether a 429 is a spent daily limit (its X-RateLimit-Type, or its
// message when the header is missing), and when the limit resets.
func dailyReset(h http.Header, message string, now time.Time) (time.Time, bool) {
	if !strings.EqualFold(h.Get("X-RateLimit-Type"), "Daily-limit") && !strings.Contains(strings.ToLower(message), "daily rate limit") {
		return time.Time{}, false
	}
	return resetAt(h.Get("Retry-After"), now), true
}

// resetAt reads a daily limit's Retry-After: a date as Zoom writes it (RFC 3339), seconds or an
// HTTP date, within the next 25 hours; else the next 00:00 UTC, when Zoom's daily limits reset.
func resetAt(v string, now time.Time) time.Time {
	if t, ok := parseReset(v, now); ok && t.After(now) && t.Sub(now) <= 25*time.Hour {
		return t
	}
	return nextMidnight(now)
}

// parseReset reads a Retry-After as a point in time: RFC 3339, seconds or an HTTP date.
func parseReset(v string, now time.Time) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, true
	}
	if d, ok := retry.ParseAfter(v, now); ok {
		return now.Add(d), true
	}
	return time.Time{}, false
}

// nextMidnight is the next 00:00 UTC after now.
func nextMidnight(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
}
