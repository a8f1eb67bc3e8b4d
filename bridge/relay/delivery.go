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

// nextDelay returns the wait after failed attempt n (1-based) of schedule, with ±20% jitter,
// honouring the endpoint's Retry-After up to MaxRetryAfter; ok is false when the schedule is
// exhausted.
func nextDelay(schedule []time.Duration, n int, retryAfter time.Duration) (time.Duration, bool) {
	if n > len(schedule) {
		return 0, false
	}
	d := schedule[n-1]
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	if retryAfter > d {
		d = min(retryAfter, MaxRetryAfter)
	}
	return d, true
}
