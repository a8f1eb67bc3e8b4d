package zoom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// Vectors computed independently: printf '…' | openssl dgst -sha256 -hmac zoom-secret-token
func TestSignatureVectors(t *testing.T) {
	if got, want := zoom.Sign(hookSecret, "1700000000", []byte(`{"event":"recording.completed"}`)),
		"v0=109921d9a15343bd6dddf4c49827069decc0e88d130d59243fa1457c92bfbd91"; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	if got, want := zoom.Encrypt(hookSecret, "qgg8vlvZRS6UYooatFL8Aw"), "d9e0d764a78494688ba3f2d5c0ed4ca311394b4834d959759213424d2df961e3"; got != want {
		t.Errorf("Encrypt = %s, want %s", got, want)
	}
}

func post(t *testing.T, h http.Handler, body []byte, ts time.Time, sig string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/hooks/zoom/zoom", bytes.NewReader(body))
	stamp := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set("x-zm-request-timestamp", stamp)
	if sig == "" {
		sig = zoom.Sign(hookSecret, stamp, body)
	}
	req.Header.Set("x-zm-signature", sig)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestWebhook(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "Pipeline review", day, map[string][]byte{"M4A": bytes.Repeat([]byte("a"), 4000), "MP4": []byte("v")})
	now := day.Add(2 * time.Hour)
	src := newSource(t, fake, zoom.Config{})
	var got []connectors.Recording
	h := src.Handler(func(_ context.Context, recs []connectors.Recording) error { got = append(got, recs...); return nil })

	// URL validation.
	w := post(t, h, []byte(`{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event":"endpoint.url_validation","event_ts":1700000000000}`), now, "")
	var answer map[string]string
	json.Unmarshal(w.Body.Bytes(), &answer)
	if w.Code != 200 || answer["plainToken"] != "qgg8vlvZRS6UYooatFL8Aw" || answer["encryptedToken"] != "d9e0d764a78494688ba3f2d5c0ed4ca311394b4834d959759213424d2df961e3" {
		t.Errorf("url_validation = %d %s", w.Code, w.Body)
	}

	event := zoomtest.RecordingCompleted(m, "dl-token-from-the-webhook", now)
	for name, c := range map[string]struct {
		ts  time.Time
		sig string
	}{
		"forged":          {now, "v0=" + zoom.Sign("another-secret", strconv.FormatInt(now.Unix(), 10), event)[3:]},
		"stale":           {now.Add(-6 * time.Minute), ""},
		"from the future": {now.Add(6 * time.Minute), ""},
		"unsigned":        {now, "v0="},
	} {
		if w := post(t, h, event, c.ts, c.sig); w.Code != http.StatusUnauthorized {
			t.Errorf("%s webhook answered %d, want 401", name, w.Code)
		}
	}
	if len(got) != 0 {
		t.Fatalf("rejected webhooks produced %d recordings", len(got))
	}

	if w := post(t, h, event, now, ""); w.Code != 200 || len(got) != 1 {
		t.Fatalf("recording.completed = %d with %d recordings, want 200 and one", w.Code, len(got))
	}
	r := got[0]
	if r.Fields["file_type"] != "M4A" || r.Owner.Email != "sam@acme.test" || r.Owner.ID != "u1" {
		t.Errorf("pushed recording = %+v", r)
	}
	// The download uses the webhook's token (the fake takes dl- tokens only as access_token).
	fake.ExpireTokens()
	before, tokens := fake.Downloads, fake.TokensIssued()
	b, err := read(src, r)
	if err != nil || len(b) != 4000 || fake.Downloads != before+1 {
		t.Errorf("download with the webhook token = %d bytes, %v", len(b), err)
	}
	if n := fake.TokensIssued() - tokens; n != 0 {
		t.Errorf("the download asked for %d OAuth token(s); want the webhook's download_token used", n)
	}
	if b, _ := json.Marshal(r); bytes.Contains(b, []byte("dl-token")) {
		t.Errorf("the download token reached the stored recording: %s", b)
	}
}

// TestWebhookRespectsUsers: the app's event subscription delivers every user's recordings;
// those of a host outside users (by id or e-mail, as the sweep lists them) are acknowledged
// and ignored, with a DEBUG line naming the host's id, never stored.
func TestWebhookRespectsUsers(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddUser("u2", "kim@acme.test", "active")
	mine := fake.AddMeeting("u1", "", "Sam's", day, map[string][]byte{"M4A": []byte("a")})
	other := fake.AddMeeting("u2", "", "Kim's", day, map[string][]byte{"M4A": []byte("b")})
	now := day.Add(2 * time.Hour)
	for _, tc := range []struct {
		users []string
		want  string
	}{
		{[]string{"u1"}, "Sam's"},
		{[]string{"SAM@acme.test"}, "Sam's"},
		{nil, "Sam's,Kim's"},
	} {
		src := newSource(t, fake, zoom.Config{Users: tc.users})
		var logs bytes.Buffer
		src.SetLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		var got []string
		h := src.Handler(func(_ context.Context, recs []connectors.Recording) error {
			for _, r := range recs {
				got = append(got, r.Fields["topic"])
			}
			return nil
		})
		for _, m := range []*zoomtest.Meeting{mine, other} {
			if w := post(t, h, zoomtest.RecordingCompleted(m, "", now), now, ""); w.Code != http.StatusOK {
				t.Errorf("users %v: recording.completed of %s answered %d, want 200", tc.users, m.Topic, w.Code)
			}
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("users %v: stored %v, want %s", tc.users, got, tc.want)
		}
		if tc.users != nil && (!strings.Contains(logs.String(), "level=DEBUG") || !strings.Contains(logs.String(), "u2") ||
			strings.Contains(logs.String(), "kim@acme.test")) {
			t.Errorf("users %v: log = %q; want a DEBUG line naming host u2 (not the e-mail)", tc.users, logs.String())
		}
	}
}

// TestDownloadURLElsewhereIsRefused (issue 30, point 4): a signed recording.completed whose
// download_url names another host is acknowledged, but its download is refused with the reason
// before any request: neither the webhook's download token nor the account's OAuth token
// reaches that host.
func TestDownloadURLElsewhereIsRefused(t *testing.T) {
	var reached []string
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Header.Get("Authorization")+" "+r.URL.RawQuery)
		w.Write(bytes.Repeat([]byte("x"), 4000))
	}))
	defer attacker.Close()
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "Pipeline review", day, map[string][]byte{"M4A": bytes.Repeat([]byte("a"), 4000)})
	now := day.Add(2 * time.Hour)
	src := newSource(t, fake, zoom.Config{})
	var got []connectors.Recording
	h := src.Handler(func(_ context.Context, recs []connectors.Recording) error { got = append(got, recs...); return nil })
	for _, link := range []string{attacker.URL + "/rec/download/x", "http://169.254.169.254/latest/meta-data/", "https://zoom.us.attacker.test/rec/download/x", "file:///etc/passwd",
		"http://us06web.zoom.us/rec/download/x"} { // Zoom's host, but the token would go in clear
		got = nil
		event := bytes.ReplaceAll(zoomtest.RecordingCompleted(m, "dl-token-from-the-webhook", now), []byte(m.File("M4A").DownloadURL), []byte(link))
		if w := post(t, h, event, now, ""); w.Code != 200 || len(got) != 1 {
			t.Fatalf("recording.completed naming %s = %d with %d recordings, want 200 and one", link, w.Code, len(got))
		}
		_, err := read(src, got[0])
		if err == nil || !strings.Contains(err.Error(), "not a Zoom host") && !strings.Contains(err.Error(), "not https") {
			t.Errorf("download from %s = %v, want refused as not a Zoom host or not https", link, err)
		}
	}
	if len(reached) != 0 {
		t.Errorf("the other host was reached: %q", reached)
	}
}
