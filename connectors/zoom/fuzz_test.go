package zoom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// FuzzZoomEvent (issue 30, point 7): whatever body is posted, signed or not, the receiver
// answers without a server error, stores nothing from an unsigned or badly signed request, and
// every recording it stores comes from a signed recording.completed.
func FuzzZoomEvent(f *testing.F) {
	fake := zoomtest.Start(f)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "Pipeline review", day, map[string][]byte{"M4A": bytes.Repeat([]byte("a"), 4000)})
	now := day.Add(2 * time.Hour)
	f.Add(zoomtest.RecordingCompleted(m, "dl-token", now), true)
	f.Add([]byte(`{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event":"endpoint.url_validation","event_ts":1700000000000}`), true)
	f.Add([]byte(`{"event":"recording.completed","payload":{"object":{"recording_files":[{"download_url":"http://169.254.169.254/"}]}}}`), true)
	f.Add([]byte(`{"event":"recording.completed","payload":null}`), false)
	f.Add([]byte(``), true)
	f.Add([]byte(`[`), true)
	src := newSource(f, fake, zoom.Config{})
	var stored int
	h := src.Handler(func(_ context.Context, recs []connectors.Recording) error { stored += len(recs); return nil })
	f.Fuzz(func(t *testing.T, body []byte, signed bool) {
		stored = 0
		req := httptest.NewRequest(http.MethodPost, "/hooks/zoom/zoom", bytes.NewReader(body))
		stamp := strconv.FormatInt(now.Unix(), 10)
		req.Header.Set("x-zm-request-timestamp", stamp)
		if signed {
			req.Header.Set("x-zm-signature", zoom.Sign(hookSecret, stamp, body))
		} else {
			req.Header.Set("x-zm-signature", "v0="+zoom.Sign("not-the-secret", stamp, body)[3:])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Errorf("POST %q (signed %v) = %d", body, signed, w.Code)
		}
		if !signed && (w.Code < 400 || stored != 0) {
			t.Errorf("POST %q with a wrong signature = %d, %d recordings stored; want refused, none", body, w.Code, stored)
		}
		var ev struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(body, &ev); stored > 0 && ev.Event != "recording.completed" {
			t.Errorf("POST %q (event %q) stored %d recordings", body, ev.Event, stored)
		}
	})
}
