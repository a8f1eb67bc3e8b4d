package teams_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// TestOpenStreams: the content comes through Graph's redirect as a stream: reading 64 MiB
// allocates a small fraction of it.
func TestOpenStreams(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	content := bytes.Repeat([]byte("0123456789abcdef"), 4<<20) // 64 MiB
	fake.AddRecording(sam.ID, day, content)
	src := newSource(t, fake, teams.Config{})
	recs, _ := list(t, src, "")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rc, err := src.Open(t.Context(), recs[0])
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("read %d bytes, allocated %d KiB", n, alloc>>10)
	if err != nil || n != int64(len(content)) {
		t.Fatalf("read %d bytes, %v; want %d", n, err, len(content))
	}
	if alloc > 8<<20 {
		t.Errorf("reading 64 MiB allocated %d MiB; want it streamed (under 8 MiB)", alloc>>20)
	}
	if fake.Count("content") != 1 || fake.Downloads != 1 {
		t.Errorf("content requests %d, downloads %d; want one of each (through the redirect)", fake.Count("content"), fake.Downloads)
	}
}

// TestOpenFailuresAreClassified: what may pass (429 and 503 with Retry-After, an HTML page, a
// body cut short) is transient, so the bridge retries it; a recording gone or replaced is not.
func TestOpenFailuresAreClassified(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	rec := fake.AddRecording(sam.ID, day, bytes.Repeat([]byte("audio "), 5000))
	src := newSource(t, fake, teams.Config{})
	recs, _ := list(t, src, "")
	for _, tc := range []struct {
		fault      string
		transient  bool
		retryAfter time.Duration
		msg        string
	}{
		{"429", true, 7 * time.Second, "429"},
		{"503", true, 120 * time.Second, "503"},
		{"html", true, 0, "text/html"},
		{"short", true, 0, "reading after 15000 bytes"},
		{"replaced", false, 0, "changed since it was listed"},
		{"gone", false, 0, "404"},
	} {
		switch tc.fault {
		case "replaced":
			fake.Replace(rec, day.Add(time.Minute), []byte("other"))
		case "gone":
			fake.Remove(rec)
		default:
			fake.Edit(func() { rec.Fault = tc.fault })
		}
		_, err := read(src, recs[0])
		if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, connectors.ErrTransient) != tc.transient ||
			connectors.TransientWait(err) != tc.retryAfter {
			t.Errorf("Open with fault %q = %v (transient %v, retry after %v), want an error saying %q, transient %v, retry after %v",
				tc.fault, err, errors.Is(err, connectors.ErrTransient), connectors.TransientWait(err), tc.msg, tc.transient, tc.retryAfter)
		}
	}
}

// TestExpiredTokenIsRenewed: a 401 (the token expired early) is answered with a new token.
func TestExpiredTokenIsRenewed(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, day, []byte("some audio"))
	src := newSource(t, fake, teams.Config{})
	recs, _ := list(t, src, "")
	fake.ExpireTokens()
	if b, err := read(src, recs[0]); err != nil || string(b) != "some audio" || fake.TokensIssued() != 2 {
		t.Errorf("Open after the token expired = %q, %v with %d tokens issued; want the content with a second token", b, err, fake.TokensIssued())
	}
}

// TestTokenStaysWithGraph (issue 30, point 4): the content's redirect leads to a
// pre-authenticated location, which gets no token, although Go itself would send it there (the
// fake serves it on the same host, another path).
func TestTokenStaysWithGraph(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, day, []byte("recording content"))
	src := newSource(t, fake, teams.Config{})
	recs, _ := list(t, src, "")
	rc, err := src.Open(t.Context(), recs[0])
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, rc)
	rc.Close()
	if fake.Downloads != 1 || fake.DownloadsWithToken != 0 {
		t.Errorf("downloads %d, with Graph's token %d; want 1 without", fake.Downloads, fake.DownloadsWithToken)
	}
}
