package zoom_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// TestWindowsAreWithinAMonth: every from/to the sweep and a backfill ask spans at most 28
// days, both ends included, so Zoom never trims one (it keeps to and moves from a month
// before it, silently: zoom/api#36); a meeting on the first day of every window is found,
// January 31 included, account-wide and user by user.
func TestWindowsAreWithinAMonth(t *testing.T) {
	now := time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)
	from := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	for _, users := range [][]string{nil, {"u1"}} {
		t.Run(strings.Join(append([]string{"users"}, users...), " "), func(t *testing.T) {
			fake := zoomtest.Start(t)
			fake.AddUser("u1", "sam@acme.test", "active")
			want := map[string]bool{}
			for d := from; !d.After(now); d = d.AddDate(0, 0, 1) { // one a day, seconds after midnight
				fake.AddMeeting("u1", "", d.Format("2006-01-02"), d.Add(30*time.Second), map[string][]byte{"M4A": []byte("a")})
				want[d.Format("2006-01-02")] = true
			}
			src := newSource(t, fake, zoom.Config{Users: users, Now: func() time.Time { return now }})
			recs, err := src.Backfill(context.Background(), from, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				delete(want, r.Fields["topic"])
			}
			if len(want) > 0 {
				t.Errorf("backfill from %s missed the meetings of %v", from.Format("2006-01-02"), keys(want))
			}
			if _, _, err := src.List(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			for _, w := range fake.Windows() {
				f, _ := time.Parse("2006-01-02", w.From)
				to, _ := time.Parse("2006-01-02", w.To)
				if days := int(to.Sub(f).Hours()/24) + 1; days > 28 {
					t.Errorf("asked %s from %s to %s: %d days, want at most 28 (both ends included)", w.Path, w.From, w.To, days)
				}
				if w.AnsweredFrom != w.From {
					t.Errorf("asked %s from %s to %s: Zoom answered from %s (trimmed)", w.Path, w.From, w.To, w.AnsweredFrom)
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestBackfillBeyondSixMonthsWarns: Zoom lists about six months back; a backfill from further
// back lists what Zoom gives and warns, naming the days it cannot list.
func TestBackfillBeyondSixMonthsWarns(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddMeeting("u1", "", "April", time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC), map[string][]byte{"M4A": []byte("a")})
	fake.AddMeeting("u1", "", "June", time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC), map[string][]byte{"M4A": []byte("a")})
	src := newSource(t, fake, zoom.Config{}) // today is 2026-11-20: Zoom lists from 2026-05-20
	var logs bytes.Buffer
	src.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	recs, err := src.Backfill(context.Background(), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Fields["topic"] != "June" {
		t.Errorf("backfill found %v, want the June meeting (April is beyond what Zoom lists)", recs)
	}
	line := logs.String()
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "2026-03-01") || !strings.Contains(line, "2026-05-19") {
		t.Errorf("log = %q; want a WARN naming the days Zoom cannot list, 2026-03-01 to 2026-05-19", line)
	}
	logs.Reset()
	if _, err := src.Backfill(context.Background(), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), nil); err != nil || logs.Len() > 0 {
		t.Errorf("a backfill within six months: err %v, log %q; want neither", err, logs.String())
	}
}
