package relay

import (
	"math/rand/v2"
	"testing"
	"time"
)

// outage is a receiver down for the first down of every period (simulated time from 0).
type outage struct{ period, down time.Duration }

func (o outage) up(t time.Duration) bool { return t%o.period >= o.down }

// simulate runs n deliveries, each first attempted at time 0, against o on schedule with the
// jitter source rnd, and returns how many landed before the schedule ran out.
func simulate(o outage, schedule []time.Duration, n int, rnd func() float64) (delivered int) {
	for range n {
		t := time.Duration(0)
		for attempt := 1; ; attempt++ {
			if o.up(t) {
				delivered++
				break
			}
			d, ok := nextDelay(schedule, attempt, 0, rnd)
			if !ok {
				break // a dead letter
			}
			t += d
		}
	}
	return delivered
}

// TestJitterEscapesPeriodicOutage: a receiver down 6 minutes in every 10, an equal-step schedule
// of 10 minutes. Without jitter every attempt of every delivery lands in the outage and all of
// them dead-letter; with the jitter nearly all land.
func TestJitterEscapesPeriodicOutage(t *testing.T) {
	o := outage{period: 10 * time.Minute, down: 6 * time.Minute}
	schedule := make([]time.Duration, 9)
	for i := range schedule {
		schedule[i] = 10 * time.Minute
	}
	const n = 1000
	none := func() float64 { return 0.5 } // the middle of [d/2, 3d/2): exactly the schedule
	if got := simulate(o, schedule, n, none); got != 0 {
		t.Errorf("without jitter: %d of %d delivered, want 0 (every attempt in the outage)", got, n)
	}
	rng := rand.New(rand.NewPCG(1, 18))
	got := simulate(o, schedule, n, rng.Float64)
	if got < n*95/100 {
		t.Errorf("with jitter: %d of %d delivered, want at least 95%%", got, n)
	}
	t.Logf("periodic outage 6/10 min, 9 retries of 10 min: %d/%d delivered with jitter, 0 without", got, n)
}

// TestNextDelayBounds: every wait is within [d/2, 3d/2), a Retry-After is a floor capped at
// MaxRetryAfter, and the schedule's end is a dead letter.
func TestNextDelayBounds(t *testing.T) {
	schedule := []time.Duration{time.Minute, time.Hour}
	for _, r := range []float64{0, 0.25, 0.5, 0.999} {
		rnd := func() float64 { return r }
		d, ok := nextDelay(schedule, 2, 0, rnd)
		if !ok || d < 30*time.Minute || d >= 90*time.Minute {
			t.Errorf("rnd %v: wait %v, want in [30m, 90m)", r, d)
		}
		if d, _ := nextDelay(schedule, 1, 10*time.Minute, rnd); d != 10*time.Minute {
			t.Errorf("rnd %v, Retry-After 10m: wait %v, want 10m", r, d)
		}
		if d, _ := nextDelay(schedule, 1, 24*time.Hour, rnd); d != MaxRetryAfter {
			t.Errorf("rnd %v, Retry-After 24h: wait %v, want %v", r, d, MaxRetryAfter)
		}
	}
	if _, ok := nextDelay(schedule, 3, 0, nil); ok {
		t.Error("attempt 3 of a 2-step schedule is retried, want a dead letter")
	}
}
