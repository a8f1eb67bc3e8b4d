package bench

import (
	"context"
	"math"
	"os"
	"testing"
	"time"
)

// TestBackfillWorkload runs the backfill small: every upload lands, none is answered 429 (the
// client's limiter keeps the pipeline under the sandbox's limit on its faster clock), and the
// figures are there with their references.
func TestBackfillWorkload(t *testing.T) {
	rep, err := Backfill(context.Background(), Env{Dir: t.TempDir(), Short: true, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, map[string]string{"backfill_rate": "uploads/min", "backfill_429s": "429s",
		"backfill_tracking": "requests/min", "backfill_big_throughput": "MiB/s"})
	for _, r := range rep.Results {
		switch {
		case r.Name == "backfill_429s" && r.Value != 0:
			t.Errorf("backfill_429s = %v, want 0: the bridge bounced off the limit", r.Value)
		case r.Name != "backfill_429s" && (r.Value <= 0 || r.Reference == nil):
			t.Errorf("%s = %v beside %v, want a positive figure beside its reference", r.Name, r.Value, r.Reference)
		}
	}
}

// TestRelayOnPostgres runs bench relay --store postgres --bus sql --replicas 3 small (and so
// one replica too): the aggregate, each replica's share and the scaling are there. It needs
// BRIDGE_TEST_POSTGRES_DSN.
func TestRelayOnPostgres(t *testing.T) {
	if os.Getenv("BRIDGE_TEST_POSTGRES_DSN") == "" {
		t.Skip("BRIDGE_TEST_POSTGRES_DSN is not set: bench relay --store postgres needs a PostgreSQL server")
	}
	rep, err := Relay(context.Background(), Env{Dir: t.TempDir(), Short: true, Log: testLog{t},
		Relay: RelayOptions{Store: "postgres", Bus: "sql", Replicas: 3}})
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]string{"relay_throughput": "deliveries/s", "relay_cpu_per_delivery": "µs", "relay_server_cpu_per_delivery": "µs",
		"relay_scaling": "deliveries/s", "relay_lag_p50": "ms", "relay_lag_p99": "ms"}
	for i := range 3 {
		units["relay_replica"+string(rune('1'+i))+"_throughput"] = "deliveries/s"
	}
	checkFigures(t, rep, units)
}

// TestGrowth: the second half's fitted line, as a fraction of its value half-way.
func TestGrowth(t *testing.T) {
	at := func(min float64) time.Duration { return time.Duration(min * float64(time.Minute)) }
	series := func(f func(x float64) float64) []soakSample {
		var out []soakSample
		for m := 1.0; m <= 10; m++ {
			out = append(out, soakSample{at: at(m), rss: f(m)})
		}
		return out
	}
	tests := []struct {
		name    string
		samples []soakSample
		want    float64
	}{
		{"flat", series(func(float64) float64 { return 50 }), 0},
		{"warm-up then flat", series(func(x float64) float64 { return 50 - 40/x/x*float64(btoi(x < 5)) }), 0},
		{"leak of 1 a minute from 50 half-way", series(func(x float64) float64 { return 45 + x }), 0.1},
		{"noise around flat", series(func(x float64) float64 { return 50 + float64(int(x)%2) }), 0},
		{"too few samples", []soakSample{{at: at(6), rss: 1}, {at: at(10), rss: 100}}, 0},
	}
	for _, tc := range tests {
		got := growth(tc.samples, at(10), func(s soakSample) float64 { return s.rss })
		if math.Abs(got-tc.want) > 0.021 {
			t.Errorf("growth(%s) = %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
