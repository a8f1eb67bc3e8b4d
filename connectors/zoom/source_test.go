package zoom_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

const hookSecret = "zoom-secret-token"

var day = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func newSource(t testing.TB, fake *zoomtest.Server, c zoom.Config) *zoom.Source {
	t.Helper()
	c.AccountID, c.ClientID, c.ClientSecret = zoomtest.AccountID, zoomtest.ClientID, zoomtest.ClientSecret
	c.APIURL, c.OAuthURL, c.WebhookSecret = fake.URL+"/v2", fake.URL+"/oauth/token", hookSecret
	c.RequestsPerSecond, c.MinBackoff = 10000, time.Millisecond
	if c.Now == nil {
		c.Now = func() time.Time { return day.Add(2 * time.Hour) }
	}
	fake.SetNow(c.Now) // one clock: the six months Zoom lists, the day a daily limit ends
	src, err := zoom.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// fixture puts each item as a meeting of host u1 with one M4A file.
type fixture struct {
	fake     *zoomtest.Server
	meetings map[string]*zoomtest.Meeting
}

func (f *fixture) Put(t *testing.T, name string, data []byte) {
	if m, ok := f.meetings[name]; ok {
		f.fake.Edit(func() { fl := m.File("M4A"); fl.Content, fl.FileSize = data, int64(len(data)) })
		return
	}
	f.meetings[name] = f.fake.AddMeeting("u1", "", strings.TrimSuffix(name, name[strings.LastIndex(name, "."):]), day, map[string][]byte{"M4A": data})
}
func (f *fixture) Remove(t *testing.T, name string) {
	f.fake.Edit(func() { f.meetings[name].RecordingFiles = nil })
}
func (f *fixture) Settle(*testing.T) {}

// Listed is the name Zoom recordings get: topic, start and the file's extension.
func (f *fixture) Listed(name string) string {
	return strings.TrimSuffix(name, name[strings.LastIndex(name, "."):]) + " 2026-11-20 0900.m4a"
}

func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		fake := zoomtest.Start(t)
		fake.AddUser("u1", "sam@acme.test", "active")
		return newSource(t, fake, zoom.Config{}), &fixture{fake: fake, meetings: map[string]*zoomtest.Meeting{}}
	})
}

func TestFilePreference(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	both := fake.AddMeeting("u1", "", "both", day, map[string][]byte{"M4A": []byte("a"), "MP4": []byte("v"), "TRANSCRIPT": []byte("t"), "CHAT": []byte("c")})
	fake.AddMeeting("u1", "", "video only", day, map[string][]byte{"MP4": []byte("v")})
	fake.AddMeeting("u1", "", "transcript only", day, map[string][]byte{"TRANSCRIPT": []byte("t")})
	pending := fake.AddMeeting("u1", "", "audio processing", day, map[string][]byte{"M4A": []byte("a"), "MP4": []byte("v")})
	fake.Edit(func() { pending.File("M4A").Status = "processing" })
	got := func(c zoom.Config) map[string]string {
		recs, _, err := newSource(t, fake, c).List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range recs {
			out[r.Fields["topic"]] = r.Fields["file_type"]
		}
		return out
	}
	if g := fmt.Sprint(got(zoom.Config{})); g != "map[both:M4A video only:MP4]" {
		t.Errorf("default file types chose %s; want M4A when present, else MP4, and nothing while the M4A is processing", g)
	}
	if g := fmt.Sprint(got(zoom.Config{FileTypes: []string{"MP4"}})); g != "map[audio processing:MP4 both:MP4 video only:MP4]" {
		t.Errorf("file_types [MP4] chose %s", g)
	}
	r := one(t, newSource(t, fake, zoom.Config{}), "both")
	want := fmt.Sprintf("zoom:%s:%s:%s", zoomtest.AccountID, both.UUID, both.File("M4A").ID)
	if r.SourceExternalID != want || r.Owner == nil || r.Owner.ID != "u1" || r.Owner.Email != "sam@acme.test" ||
		r.Metadata["zoom_topic"] != "both" || r.Metadata["zoom_meeting_id"] != strconv.FormatInt(both.ID, 10) || r.Metadata["zoom_host"] != "sam@acme.test" {
		t.Errorf("recording = %+v; want external id %s, host u1/sam@acme.test and topic, meeting id, host in metadata", r, want)
	}
}

func one(t *testing.T, src *zoom.Source, topic string) connectors.Recording {
	t.Helper()
	recs, _, err := src.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Fields["topic"] == topic {
			return r
		}
	}
	t.Fatalf("no recording of %q in %v", topic, recs)
	return connectors.Recording{}
}

func read(src *zoom.Source, r connectors.Recording) ([]byte, error) {
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// TestDownloadFailuresAreErrors: Zoom's HTML page with 200 and a body cut short are errors,
// never a finished file; a redirect is followed; an expired token is replaced after a 401;
// 429 waits Retry-After, in seconds or as a date.
func TestDownloadFailuresAreErrors(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": bytes.Repeat([]byte("audio "), 5000)})
	src := newSource(t, fake, zoom.Config{})
	r := one(t, src, "standup")

	fake.Edit(func() { m.File("M4A").Fault = "html" })
	if _, err := read(src, r); err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Errorf("an HTML answer: err = %v, want an error naming the HTML page", err)
	}
	fake.Edit(func() { m.File("M4A").Fault = "short" })
	if _, err := read(src, r); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("a short body: err = %v, want an error", err)
	}
	fake.ExpireTokens()
	fake.RateLimit("1", day.Add(2*time.Hour+time.Second).Format(http.TimeFormat), "") // the source's clock is day+2h
	start := time.Now()
	r = one(t, src, "standup")
	if waited := time.Since(start); waited < 1500*time.Millisecond {
		t.Errorf("three 429s (Retry-After 1 s, a date 1 s ahead, none) took %v; want the waits honoured", waited)
	}
	b, err := read(src, r)
	if err != nil || len(b) != 30000 {
		t.Errorf("download after a token expiry = %d bytes, %v; want all 30000", len(b), err)
	}
}

func TestAfterUploadTrashEncodesUUIDs(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddMeeting("u1", "/ajXp112QmuoKj4854875==", "slash first", day, map[string][]byte{"M4A": []byte("a")})
	fake.AddMeeting("u1", "aBc//dEf+g==", "double slash", day, map[string][]byte{"M4A": []byte("b")})
	fake.AddMeeting("u1", "Kj4+85/487Q==", "plain", day, map[string][]byte{"M4A": []byte("c")})
	src := newSource(t, fake, zoom.Config{AfterUpload: "trash"})
	recs, _, _ := src.List(context.Background(), "")
	for _, r := range recs {
		if err := src.Finish(context.Background(), r, connectors.OutcomeFailed); err != nil {
			t.Fatal(err)
		}
		if err := src.Finish(context.Background(), r, connectors.OutcomeDone); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{
		"/v2/meetings/%252FajXp112QmuoKj4854875%253D%253D/recordings/file-1-m4a?action=trash": true,
		"/v2/meetings/aBc%252F%252FdEf%252Bg%253D%253D/recordings/file-2-m4a?action=trash":    true,
		"/v2/meetings/Kj4%2B85%2F487Q%3D%3D/recordings/file-3-m4a?action=trash":               true,
	}
	if len(fake.Deleted) != 3 {
		t.Fatalf("DELETEs = %v, want one per done meeting (none for a failed job)", fake.Deleted)
	}
	for _, d := range fake.Deleted {
		if !want[d] {
			t.Errorf("DELETE %s: not the expected encoding (%v)", d, want)
		}
	}
}

// TestDownloadFailuresAreClassified: what may pass (an HTML page, a short body, 503 with
// Retry-After) is transient, so the bridge retries it; a recording gone (404) is not.
func TestDownloadFailuresAreClassified(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": bytes.Repeat([]byte("audio "), 5000)})
	src := newSource(t, fake, zoom.Config{})
	r := one(t, src, "standup")
	for _, tc := range []struct {
		fault      string
		transient  bool
		retryAfter time.Duration
		msg        string
	}{
		{"html", true, 0, "HTML page"},
		{"short", true, 0, "cut short"},
		{"503", true, 120 * time.Second, "503"},
		{"gone", false, 0, "404"},
	} {
		fake.Edit(func() {
			f := m.File("M4A")
			if tc.fault == "gone" {
				f.ID = "deleted"
			} else {
				f.Fault = tc.fault
			}
		})
		_, err := read(src, r)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, connectors.ErrTransient) != tc.transient ||
			connectors.TransientWait(err) != tc.retryAfter {
			t.Errorf("download with fault %q = %v (transient %v, retry after %v), want an error saying %q, transient %v, retry after %v",
				tc.fault, err, errors.Is(err, connectors.ErrTransient), connectors.TransientWait(err), tc.msg, tc.transient, tc.retryAfter)
		}
	}
}
