package zoomtest

import (
	"net/http"
	"time"
)

// Zoom's rate limits (https://developers.zoom.us/docs/api/rest/rate-limits/): a request over a
// limit is answered 429; "Rate Limit Type - how that quota is enforced, either per second (QPS)
// or as a daily limit". The example header of a spent daily limit is
//
//	X-RateLimit-Category: Heavy
//	X-RateLimit-Type: Daily-limit
//	X-RateLimit-Limit: 30000
//	X-RateLimit-Remaining: 0
//	Retry-After: 2020-05-31T00:00:00Z
//
// (the same page, "Best practices for handling errors", as quoted in
// https://devforum.zoom.us/t/zoom-api-create-meeting-api-rate-limit-sample-error-when-breaching-limit/18928),
// and the body says "… You may resume these requests at GMT 00:00:00." Per second, the body is
// "You have reached the maximum per-second rate limit for this API. Try again later." (ibid.).
// testdata/daily-limit.json and testdata/qps-limit.json hold both.

const (
	qpsMessage   = "You have reached the maximum per-second rate limit for this API. Try again later."
	dailyMessage = "You have exceeded the daily rate limit (2000) of API requests permitted for this account. You may resume these requests at GMT 00:00:00."
)

// limit answers 429 when a per-second 429 is queued (RateLimit) or the daily limit is spent
// (DailyLimit), and reports whether it did.
func (s *Server) limit(w http.ResponseWriter, category string) bool {
	s.mu.Lock()
	if len(s.limited) > 0 {
		ra := s.limited[0]
		s.limited = s.limited[1:]
		s.mu.Unlock()
		if ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.Header().Set("X-RateLimit-Category", category)
		w.Header().Set("X-RateLimit-Type", "QPS")
		zoomError(w, http.StatusTooManyRequests, 429, qpsMessage)
		return true
	}
	until, spent := s.spendDaily()
	s.mu.Unlock()
	if spent {
		dailyLimited(w, category, until)
	}
	return spent
}

// spendDaily counts a request against the daily limit, and says whether the limit is spent
// and until when. Call with the lock held.
func (s *Server) spendDaily() (until time.Time, spent bool) {
	now := s.now().UTC()
	switch {
	case !s.dailyUntil.IsZero() && now.Before(s.dailyUntil):
		return s.dailyUntil, true
	case !s.dailyUntil.IsZero(): // the day is over: the limit is reset
		s.dailyUntil, s.dailyLeft = time.Time{}, -1
	case s.dailyLeft == 0:
		s.dailyUntil = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
		return s.dailyUntil, true
	case s.dailyLeft > 0:
		s.dailyLeft--
	}
	return time.Time{}, false
}

// dailyLimited answers a spent daily limit, as the rate limits page shows it.
func dailyLimited(w http.ResponseWriter, category string, until time.Time) {
	h := w.Header()
	h.Set("X-RateLimit-Category", category)
	h.Set("X-RateLimit-Type", "Daily-limit")
	h.Set("X-RateLimit-Limit", "2000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("Retry-After", until.UTC().Format(time.RFC3339))
	zoomError(w, http.StatusTooManyRequests, 429, dailyMessage)
}
