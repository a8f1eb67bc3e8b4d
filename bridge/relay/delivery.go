package relay

import (
	"math/rand/v2"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Store is what the relay needs of the store: deliveries, their attempts and the endpoints'
// state (bridge/sqlite implements it, with the rest of bridge.Store).
type Store interface {
	bridge.DeliveryStore
}

// Schedule is the delay before each retry: the first within seconds, about ten attempts over
// about three days.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// MaxRetryAfter caps how long an endpoint's Retry-After may postpone a delivery.
const MaxRetryAfter = 6 * time.Hour

// nextDelay returns the wait after failed attempt n (1-based) of schedule, jittered by rnd (a
// uniform source in [0, 1), math/rand/v2's Float64 when nil), honouring the endpoint's
// Retry-After up to MaxRetryAfter; ok is false when the schedule is exhausted.
//
// The jitter is "equal jitter" on each step: the wait is uniform in [d/2, 3d/2). Its mean is
// d, so the configured schedule keeps its meaning (about ten attempts over about three days by
// default), and its spread is a whole step, so the attempts of a delivery drift to any phase of a
// receiver's periodic outage instead of landing at the same phase every time (an equal-step
// schedule against an outage of that period dead-letters every delivery; see
// TestJitterEscapesPeriodicOutage). The lower bound d/2 rather than full jitter's 0 keeps a
// retry from following its failure at once, against a receiver that has just fallen over, and
// keeps the first steps from collapsing. A Retry-After is a floor: the jittered wait is never
// shorter than what the endpoint asked for (capped at MaxRetryAfter).
func nextDelay(schedule []time.Duration, n int, retryAfter time.Duration, rnd func() float64) (time.Duration, bool) {
	if n > len(schedule) {
		return 0, false
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	d := schedule[n-1]
	d = time.Duration(float64(d) * (0.5 + rnd()))
	if retryAfter > d {
		d = min(retryAfter, MaxRetryAfter)
	}
	return d, true
}

// fetchRetry is the wait before trying again a delivery whose payload could not be fetched
// after attempts counted tries: the schedule's wait for them (its first for none, its last
// beyond it), jittered as nextDelay's; a second without a schedule.
func fetchRetry(schedule []time.Duration, attempts int, rnd func() float64) time.Duration {
	if len(schedule) == 0 {
		return time.Second
	}
	d, _ := nextDelay(schedule, min(max(attempts, 1), len(schedule)), 0, rnd)
	return d
}
