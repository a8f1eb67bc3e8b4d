package api

import (
	"context"
	"testing"
	"time"
)

// TestContended: a request that is not background work and finds the key's data budget spent
// makes it contended for a quarter of the rate window (15 minutes of an hour here); a
// background request that finds it spent does not, nor does one that finds a token, nor
// anything without a limiter.
func TestContended(t *testing.T) {
	for _, tc := range []struct {
		name       string
		perMinute  int
		requests   int // the first takes the bucket's only token; the others find it spent
		background bool
		after      time.Duration
		want       bool
	}{
		{"foreground finds it spent", 50, 2, false, 0, true},
		{"within the hold", 50, 2, false, 15*time.Minute - time.Second, true},
		{"after the hold", 50, 2, false, 15 * time.Minute, false},
		{"background finds it spent", 50, 2, true, 0, false},
		{"a token left", 50, 1, false, 0, false},
		{"no limiter", -1, 2, false, 0, false},
	} {
		c, err := New(Config{BaseURL: "http://x/developer/v1", Key: "k", DataPerMinute: tc.perMinute, RateWindow: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		start, offset := time.Now(), time.Duration(0)
		c.now = func() time.Time { return start.Add(offset) }
		ctx := context.Background()
		if tc.background {
			ctx = Background(ctx)
		}
		for i := range tc.requests {
			wctx, cancel := context.WithTimeout(ctx, time.Minute) // a spent bucket refills in 75 s: Wait gives up at once
			err := c.wait(wctx, classData)
			cancel()
			if (err != nil) != (i > 0 && tc.perMinute > 0) {
				t.Fatalf("%s: wait %d = %v", tc.name, i, err)
			}
		}
		offset = tc.after
		if got := c.Contended(); got != tc.want {
			t.Errorf("%s: Contended() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDataBudget: the budget is the configured requests per window, 0 without a limiter.
func TestDataBudget(t *testing.T) {
	for _, tc := range []struct {
		perMinute, want int
		window          time.Duration
	}{{0, 500, time.Minute}, {120, 120, 15 * time.Second}, {-1, 0, time.Minute}} {
		c, err := New(Config{BaseURL: "http://x/developer/v1", Key: "k", DataPerMinute: tc.perMinute, RateWindow: tc.window})
		if err != nil {
			t.Fatal(err)
		}
		if n, w := c.DataBudget(); n != tc.want || w != tc.window {
			t.Errorf("DataBudget() with DataPerMinute %d = %d, %v, want %d, %v", tc.perMinute, n, w, tc.want, tc.window)
		}
	}
}
