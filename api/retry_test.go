package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// stub answers with the scripted statuses in turn (the last repeats) and counts attempts. It
// stands in for the service only where the sandbox cannot be made to answer so (unknown codes,
// exact sequences).
func stub(t *testing.T, script ...string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		io.Copy(io.Discard, r.Body)
		line := script[min(i, len(script)-1)]
		var status int
		var code string
		fmt.Sscanf(line, "%d %s", &status, &code)
		if status == 200 {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"workspace":{"id":"x","name":"x"},"key":{"scopes":["read"]}}`)
			return
		}
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%q,"message":"scripted","detail":{"n":%d}}`, code, i)
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

func stubClient(t *testing.T, url string) *api.Client {
	c, err := api.New(api.Config{BaseURL: url + "/developer/v1", Key: "mk_live_secret_value", MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, MaxAttempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		script   []string
		attempts int32
		code     string // "" for success
	}{
		{[]string{"503 x", "502 x", "200"}, 3, ""},
		{[]string{"429 rate_limit_exceeded", "200"}, 2, ""},
		{[]string{"409 idempotency_conflict", "200"}, 2, ""},
		{[]string{"500 x"}, 4, "x"}, // bounded by MaxAttempts
		{[]string{"400 bad"}, 1, "bad"},
		{[]string{"404 not_found"}, 1, "not_found"},
		{[]string{"409 transcription_failed"}, 1, "transcription_failed"},
		{[]string{"422 brand_new_code"}, 1, "brand_new_code"}, // unknown codes kept verbatim
	}
	for _, tc := range tests {
		ts, n := stub(t, tc.script...)
		_, err := stubClient(t, ts.URL).Workspace(context.Background())
		if n.Load() != tc.attempts {
			t.Errorf("%v: %d attempts, want %d", tc.script, n.Load(), tc.attempts)
		}
		if tc.code == "" && err != nil || tc.code != "" && !api.IsCode(err, tc.code) {
			t.Errorf("%v: error %v, want code %q", tc.script, err, tc.code)
		}
		if err != nil && strings.Contains(err.Error(), "mk_live_secret_value") {
			t.Errorf("error text holds the key: %v", err)
		}
	}
	// A Retry-After beyond MaxRetryAfter (a daily quota) is returned at once.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "36000")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"code":"daily_reports_quota_exceeded","message":"m","detail":{}}`)
	}))
	defer ts.Close()
	start := time.Now()
	_, err := stubClient(t, ts.URL).Workspace(context.Background())
	if e := api.AsError(err); e == nil || e.RetryAfter != 10*time.Hour || time.Since(start) > 5*time.Second {
		t.Errorf("daily quota = %v, want the error at once with RetryAfter 10h", err)
	}
	// The context bounds the retries.
	ts2, _ := stub(t, "503 x")
	c, _ := api.New(api.Config{BaseURL: ts2.URL, Key: "k", MinBackoff: time.Hour, MaxBackoff: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Workspace(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "503") {
		t.Errorf("retries past the deadline = %v, want DeadlineExceeded naming the last failure", err)
	}
}

func TestNetworkErrorsAreRetriedAndScrubbed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	c, _ := api.New(api.Config{BaseURL: "http://" + addr, Key: "mk_live_very_secret", MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxAttempts: 3})
	_, err = c.Workspace(context.Background())
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || strings.Contains(err.Error(), "very_secret") {
		t.Errorf("refused connection = %v", err)
	}
}

// TestUploadsUnderFaults: 200 uploads through a sandbox injecting 5xx, 429, resets (before and
// after handling) and latency make exactly 200 transcriptions, each charged once.
func TestUploadsUnderFaults(t *testing.T) {
	faults, _ := sandbox.ParseFaults("5xx=0.1,429=0.1,reset=0.1,latency=1ms")
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.Faults, o.FaultSeed, o.DataRate = faults, 42, 100000
		o.Seed.Workspaces[0].BalanceMinutes = 10000
		o.Seed.Workspaces[0].Limits.MaxQueuedFiles = 1000
	})
	// Fresh connections keep Go's own transport retry out of the picture: only ours counts.
	c := newClient(t, sb, sandboxtest.OwnerKey, func(cfg *api.Config) {
		cfg.HTTPClient = sandboxtest.HTTPClient(t, &http.Transport{DisableKeepAlives: true})
		cfg.DataPerMinute, cfg.MaxAttempts = -1, 20
	})
	ctx := context.Background()
	const n = 200
	var wg sync.WaitGroup
	ids := make([]string, n)
	var replayed atomic.Int32
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			file := wav(60, uint64(i)) // one minute each
			res, err := c.Upload(ctx, api.UploadParams{Filename: fmt.Sprintf("f%03d.wav", i), Size: int64(len(file)),
				Body: bytes.NewReader(file), ExternalID: fmt.Sprintf("fault-%03d", i)})
			if err != nil {
				t.Errorf("upload %d: %v", i, err)
				return
			}
			if res.Replayed {
				replayed.Add(1)
			}
			ids[i] = res.UUID
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("two files got the same transcription %s", id)
		}
		seen[id] = true
	}
	// Every file stored and charged once: 200 one-minute files take 200 minutes.
	var ws sandbox.WorkspaceState
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ws = sb.Workspace(t, sandboxtest.WorkspaceID)
		if ws.Transcriptions["completed"] == n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	total := 0
	for _, c := range ws.Transcriptions {
		total += c
	}
	if total != n || ws.Transcriptions["completed"] != n || ws.AvailableMinutes != 10000-n {
		t.Errorf("transcriptions %v, balance %v; want %d completed and %d minutes left", ws.Transcriptions, ws.AvailableMinutes, n, 10000-n)
	}
	t.Logf("%d uploads answered by replay (their first answer was lost)", replayed.Load())
	if replayed.Load() == 0 {
		t.Errorf("no upload was replayed: the faults did not exercise lost answers")
	}
}
