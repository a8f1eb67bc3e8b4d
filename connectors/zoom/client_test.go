package zoom

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestCategoryLimits(t *testing.T) {
	for _, tc := range []struct {
		plan  string
		share float64
		want  [3]rate.Limit
	}{
		{"pro", 0.5, [3]rate.Limit{15, 10, 5}},
		{"business", 1, [3]rate.Limit{80, 60, 40}},
	} {
		c := Config{AccountID: "a", ClientID: "c", ClientSecret: "s", RatePlan: tc.plan, RateShare: tc.share}
		c.SetDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		cl := newClient(c)
		for cat, want := range tc.want {
			if got := cl.limits[category(cat)].Limit(); got != want {
				t.Errorf("plan %s share %v: category %d limit = %v, want %v", tc.plan, tc.share, cat, got, want)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"Sun, 22 Nov 2026 10:00:07 GMT", 7 * time.Second},
		{"86400", 5 * time.Minute}, // capped
		{"soon", 0},
		{"Sun, 22 Nov 2026 09:00:00 GMT", time.Millisecond}, // past: at once
		{"2026-11-22T10:00:04Z", 4 * time.Second},           // a date as Zoom writes it (RFC 3339)
	} {
		if got := retryAfter(tc.in, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestMeetingPath(t *testing.T) {
	for _, tc := range []struct{ uuid, want string }{
		{"Kj4+85/487Q==", "Kj4%2B85%2F487Q%3D%3D"},
		{"/ajXp112QmuoKj4854875==", "%252FajXp112QmuoKj4854875%253D%253D"},
		{"aBc//dEf", "aBc%252F%252FdEf"},
	} {
		if got := meetingPath(tc.uuid); got != tc.want {
			t.Errorf("meetingPath(%q) = %q, want %q", tc.uuid, got, tc.want)
		}
	}
}
