package relay

import (
	"testing"
	"time"
)

// TestMemoBounds: a memo keeps at most max values and drops the expired ones as new values come
// in, so a slow trickle does not fill it to max over the hours.
func TestMemoBounds(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		ttl        time.Duration
		max, puts  int
		every      time.Duration // between puts
		wantKept   int
		wantOldest bool // whether the first value put is still found at the last put's time
	}{
		{"a burst beyond max keeps max", time.Minute, 10, 25, time.Millisecond, 10, false},
		{"a trickle keeps the TTL's worth", time.Minute, 1000, 600, time.Second, 60, false},
		{"within the TTL all are kept", time.Hour, 1000, 600, time.Second, 600, true},
	}
	for _, tc := range tests {
		m := newMemo[int](tc.ttl, tc.max)
		now := t0
		for i := range tc.puts {
			now = t0.Add(time.Duration(i) * tc.every)
			m.put(int64(i), i, now)
		}
		if got := len(m.items); got != tc.wantKept {
			t.Errorf("%s: len = %d, want %d", tc.name, got, tc.wantKept)
		}
		if _, ok := m.get(0, now); ok != tc.wantOldest {
			t.Errorf("%s: get(first) found = %v, want %v", tc.name, ok, tc.wantOldest)
		}
		if v, ok := m.get(int64(tc.puts-1), now); !ok || v != tc.puts-1 {
			t.Errorf("%s: get(last) = %d, %v, want %d, true", tc.name, v, ok, tc.puts-1)
		}
	}
}
