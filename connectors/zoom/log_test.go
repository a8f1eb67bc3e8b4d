package zoom_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// TestWarningsReachTheLogger: with SetLogger (what bridge run does), a webhook's download token
// refused is a WARN line, naming neither token, and the download goes on with an OAuth token.
func TestWarningsReachTheLogger(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "Pipeline review", day, map[string][]byte{"M4A": bytes.Repeat([]byte("a"), 4000)})
	src := newSource(t, fake, zoom.Config{})
	var logs bytes.Buffer
	src.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	var got []connectors.Recording
	h := src.Handler(func(_ context.Context, recs []connectors.Recording) error { got = append(got, recs...); return nil })
	now := day.Add(2 * time.Hour)
	if w := post(t, h, zoomtest.RecordingCompleted(m, "refused-download-token", now), now, ""); w.Code != 200 || len(got) != 1 {
		t.Fatalf("recording.completed = %d with %d recordings", w.Code, len(got))
	}
	if b, err := read(src, got[0]); err != nil || len(b) != 4000 {
		t.Fatalf("download = %d bytes, %v; want it done with an OAuth token", len(b), err)
	}
	line := logs.String()
	if !strings.Contains(line, `level=WARN msg="download with the webhook's token failed; using an OAuth token"`) ||
		strings.Contains(line, "refused-download-token") || strings.Contains(line, "zt-") {
		t.Errorf("log = %q; want one WARN line without the tokens", line)
	}
}
