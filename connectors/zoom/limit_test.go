package zoom_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// clock is a settable time shared by the source and the fake.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestDailyLimitPausesTheSweep: a sweep that meets Zoom's daily limit (429, X-RateLimit-Type:
// Daily-limit) does not fail: it keeps what it listed, warns, and its cursor names the first
// day not listed; until 00:00 UTC the source asks Zoom nothing; after it, the sweep resumes
// from that day.
func TestDailyLimitPausesTheSweep(t *testing.T) {
	c := &clock{t: day.Add(2 * time.Hour)} // 2026-11-20 11:00 UTC
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	for _, d := range []time.Time{day.AddDate(0, -2, 5), day.AddDate(0, -1, 5), day.AddDate(0, 0, -1)} {
		fake.AddMeeting("u1", "", d.Format("2006-01-02"), d, map[string][]byte{"M4A": []byte("a")})
	}
	src := newSource(t, fake, zoom.Config{Now: c.Now})
	var logs bytes.Buffer
	src.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	fake.DailyLimit(1) // the first window is listed, the second is refused for the day

	recs, cursor, err := src.List(context.Background(), "2026-09-20")
	if err != nil {
		t.Fatalf("List over the daily limit failed: %v; want it to stop without failing", err)
	}
	if len(recs) != 1 || recs[0].Fields["topic"] != "2026-09-25" || cursor != "2026-10-18" {
		t.Errorf("List = %d recording(s), cursor %q; want the first window's meeting and the next window's first day, 2026-10-18", len(recs), cursor)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "2026-11-21T00:00:00Z") {
		t.Errorf("log = %q; want a warning naming when the limit resets", logs.String())
	}
	calls := fake.Calls["account recordings"]
	if recs, again, err := src.List(context.Background(), cursor); err != nil || len(recs) != 0 || again != cursor || fake.Calls["account recordings"] != calls {
		t.Errorf("List before the reset = %d recording(s), cursor %q, %v, %d more call(s); want nothing asked and the cursor kept",
			len(recs), again, err, fake.Calls["account recordings"]-calls)
	}

	c.set(time.Date(2026, 11, 21, 0, 30, 0, 0, time.UTC))
	recs, cursor, err = src.List(context.Background(), cursor)
	var topics []string
	for _, r := range recs {
		topics = append(topics, r.Fields["topic"])
	}
	if err != nil || strings.Join(topics, ",") != "2026-10-25,2026-11-19" || cursor != "2026-11-18" {
		t.Errorf("List after the reset = %v, cursor %q, %v; want the meetings from 2026-10-18 on and the cursor three days back", topics, cursor, err)
	}
}

// TestDownloadRefusalsAboutTheAccountAreBlocked: a 402, a 403 naming a licence and a spent
// daily limit hold the job (connectors.ErrBlocked), the daily limit until 00:00 UTC; another
// 403 is final.
func TestDownloadRefusalsAboutTheAccountAreBlocked(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": bytes.Repeat([]byte("audio "), 500)})
	src := newSource(t, fake, zoom.Config{}) // the clock says 11:00 UTC
	r := one(t, src, "standup")
	for _, tc := range []struct {
		fault   string
		blocked bool
		wait    time.Duration
	}{
		{"402", true, connectors.DefaultBlockedWait},
		{"403-licence", true, connectors.DefaultBlockedWait},
		{"daily", true, 13 * time.Hour},
		{"403", false, 0},
	} {
		fake.Edit(func() { m.File("M4A").Fault = tc.fault })
		_, err := read(src, r)
		blocked := errors.Is(err, connectors.ErrBlocked)
		if err == nil || blocked != tc.blocked || connectors.BlockedWait(err) != tc.wait || errors.Is(err, connectors.ErrTransient) {
			t.Errorf("download answered %s: %v (blocked %v, wait %v, transient %v); want blocked %v, wait %v, not transient",
				tc.fault, err, blocked, connectors.BlockedWait(err), errors.Is(err, connectors.ErrTransient), tc.blocked, tc.wait)
		}
	}
}

// TestDailyLimitStopsABackfill: a backfill that meets the daily limit returns what it found
// and an error naming the day to backfill from after the reset (bridge sources backfill keeps
// the recordings and exits non-zero).
func TestDailyLimitStopsABackfill(t *testing.T) {
	c := &clock{t: day.Add(2 * time.Hour)}
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	for _, d := range []time.Time{day.AddDate(0, -2, 5), day.AddDate(0, -1, 5)} {
		fake.AddMeeting("u1", "", d.Format("2006-01-02"), d, map[string][]byte{"M4A": []byte("a")})
	}
	src := newSource(t, fake, zoom.Config{Now: c.Now})
	fake.DailyLimit(1)
	recs, err := src.Backfill(context.Background(), time.Date(2026, 9, 20, 0, 0, 0, 0, time.UTC), func(int, int) {})
	if len(recs) != 1 || err == nil || !strings.Contains(err.Error(), "--from 2026-10-18") {
		t.Errorf("Backfill over the daily limit = %d recording(s), %v; want the first window's and an error naming --from 2026-10-18", len(recs), err)
	}
}
