package sandbox

import (
	"math"
	"net/http"
	"sync"
	"time"
)

// rateLimiter keeps a sliding one-minute window of request times per key and endpoint class.
type rateLimiter struct {
	mu      sync.Mutex
	windows map[string][]time.Time
}

func newRateLimiter() *rateLimiter { return &rateLimiter{windows: map[string][]time.Time{}} }

func (l *rateLimiter) reset() {
	l.mu.Lock()
	l.windows = map[string][]time.Time{}
	l.mu.Unlock()
}

// allow records a request at now when fewer than limit fell in the last window (a minute);
// otherwise it returns false and how long until the oldest of them leaves the window.
func (l *rateLimiter) allow(id string, limit int, window time.Duration, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	win := l.windows[id]
	cut := 0
	for cut < len(win) && now.Sub(win[cut]) >= window {
		cut++
	}
	win = win[cut:]
	if len(win) >= limit {
		l.windows[id] = win
		return false, window - now.Sub(win[0])
	}
	l.windows[id] = append(win, now)
	return true, 0
}

// rateLimit applies the per-key limit of class: 500/min for data endpoints (every endpoint but
// deletion, see README), 30/min for deletions. Beyond it: 429 rate_limit_exceeded with Retry-After.
func (s *Server) rateLimit(class string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalFrom(r)
		limit := s.opts.DataRate
		if class == classDelete {
			limit = s.opts.DeleteRate
		}
		ok, wait := s.limits.allow(p.keyHash+"/"+class, limit, s.opts.RateWindow, s.now())
		if !ok {
			secs := int(math.Ceil(wait.Seconds()))
			writeRetryError(w, r, http.StatusTooManyRequests, "rate_limit_exceeded",
				"rate limit exceeded; back off rather than retry immediately", secs,
				map[string]any{"limit_per_minute": limit, "class": class})
			return
		}
		next(w, r)
	})
}
