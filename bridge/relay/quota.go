package relay

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// ParseRateLimit reads an endpoint's rate_limit: "N/period", at most N requests at once (the
// burst) and N per period on average. The period is a unit (s, m, h: one second, minute or
// hour) or a Go duration ("10s", "1m30s"): "10/s", "100/10s" (HubSpot's quota), "600/m".
func ParseRateLimit(s string) (n int, per time.Duration, err error) {
	count, period, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not N/period (10/s, 100/10s, 600/m)", s)
	}
	n, err = strconv.Atoi(count)
	if err != nil || n <= 0 {
		return 0, 0, fmt.Errorf("%q: %q is not a positive number of requests", s, count)
	}
	switch period {
	case "s", "m", "h":
		per, _ = time.ParseDuration("1" + period)
	default:
		per, err = time.ParseDuration(period)
		if err != nil || per <= 0 {
			return 0, 0, fmt.Errorf("%q: %q is not a period (s, m, h or a duration as 10s)", s, period)
		}
	}
	return n, per, nil
}

// quota is an endpoint's rate limit on this replica: its share of the configured one, the
// configured rate and burst divided by the live replicas (share).
type quota struct {
	n   int
	per time.Duration
	lim *rate.Limiter
}

func newQuota(n int, per time.Duration) *quota {
	q := &quota{n: n, per: per, lim: rate.NewLimiter(0, 1)}
	q.share(1)
	return q
}

// share sets this replica's part of the quota when replicas relays share it: rate/replicas
// on average, a burst of n/replicas (at least one).
func (q *quota) share(replicas int) {
	replicas = max(replicas, 1)
	q.lim.SetLimit(rate.Limit(float64(q.n) / q.per.Seconds() / float64(replicas)))
	q.lim.SetBurst(max(1, q.n/replicas))
}

// wait waits for the quota to admit one request; it waits at most within (0: as long as it
// takes) and reports false, the turn given up, when the quota would admit it later than that
// or ctx ended first.
func (q *quota) wait(ctx context.Context, within time.Duration) bool {
	if q == nil {
		return true
	}
	res := q.lim.Reserve()
	delay := res.Delay()
	if delay == 0 {
		return true
	}
	ok := within <= 0 || delay <= within
	if !ok {
		delay = within // the worker waits its share all the same: no spinning on a turn not come
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		ok = false
	}
	if !ok {
		res.Cancel()
	}
	return ok
}
