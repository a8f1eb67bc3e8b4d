package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// syncBuffer is a bytes.Buffer safe to write from one goroutine while another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadyzAndMetricsOfARunningBridge: `bridge run` with server.addr serves /healthz, /readyz
// (ready once the store, the schema, the API and the bus are) and /metrics (the recording done,
// the API requests counted); when the API stops answering, /readyz turns 503 naming the api
// check within three poll intervals, and ready again once it answers.
func TestReadyzAndMetricsOfARunningBridge(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	target, _ := url.Parse(sb.URL)
	var down atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer api.Close()
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(inbox, "call.wav"), wavBytes(3, 1), 0o644)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
server: {addr: "127.0.0.1:0"}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, author: "email:sam@acme.test", schedule: "@every 1s"}
`, api.URL+target.Path, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), inbox), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, io.Discard, &errb) }()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("bridge run exited %d\n%s", code, tail(errb.String(), 20))
		}
	}()
	addr := regexp.MustCompile(`msg="server listening" addr=(\S+)`)
	var base string
	eventually(t, "the server to listen", &errb, func() bool {
		if m := addr.FindStringSubmatch(errb.String()); m != nil {
			base = "http://" + m[1]
		}
		return base != ""
	})
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	readiness := func() (int, server.Readiness) {
		code, body := get("/readyz")
		var rd server.Readiness
		json.Unmarshal([]byte(body), &rd)
		return code, rd
	}
	eventually(t, "/readyz 200 with its six checks", &errb, func() bool {
		code, rd := readiness()
		sources := slices.IndexFunc(rd.Checks, func(c server.CheckResult) bool { return c.Name == "sources" && c.OK })
		return code == 200 && rd.Status == "ready" && len(rd.Checks) == 6 && sources >= 0
	})
	eventually(t, "the recording done in /metrics", &errb, func() bool {
		_, body := get("/metrics")
		return strings.Contains(body, `bridge_jobs{state="done"} 1`) &&
			strings.Contains(body, `bridge_api_requests_total{method="POST",route="/transcriptions",status="201"} 1`) &&
			strings.Contains(body, `bridge_uploads_total{outcome="uploaded"} 1`) &&
			strings.Contains(body, `bridge_purged_total{kind="deliveries"} 0`)
	})
	down.Store(true)
	eventually(t, "/readyz 503 naming the api", &errb, func() bool {
		code, rd := readiness()
		for _, c := range rd.Checks {
			if c.Name == "api" && !c.OK && strings.Contains(c.Error, "no answer for") {
				return code == http.StatusServiceUnavailable && rd.Status == "unready"
			}
		}
		return false
	})
	down.Store(false)
	eventually(t, "/readyz 200 again", &errb, func() bool { code, _ := readiness(); return code == 200 })
}

// eventually polls cond every 50 ms for up to 20 s, failing with the log's tail.
func eventually(t *testing.T, what string, log *syncBuffer, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, tail(log.String(), 20))
		}
	}
}

// TestMetricsAddrApart (issue 30, point 6): with server.metrics_addr, /metrics and /readyz
// answer on that listener only, and the main one (the status page, the webhooks) no longer
// serves them.
func TestMetricsAddrApart(t *testing.T) {
	sb := sandboxtest.Start(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q}
store: {dsn: %q}
server: {addr: "127.0.0.1:0", metrics_addr: "127.0.0.1:0"}
sources:
  - {name: inbox, type: localdir, path: %q, author: "email:sam@acme.test"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), inbox), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, io.Discard, &errb) }()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("bridge run exited %d\n%s", code, tail(errb.String(), 20))
		}
	}()
	mainAddr := regexp.MustCompile(`msg="server listening" addr=(\S+)`)
	opsAddr := regexp.MustCompile(`msg="metrics and readiness listening apart" metrics_addr=(\S+)`)
	var main, ops string
	eventually(t, "both listeners", &errb, func() bool {
		if m := mainAddr.FindStringSubmatch(errb.String()); m != nil {
			main = "http://" + m[1]
		}
		if m := opsAddr.FindStringSubmatch(errb.String()); m != nil {
			ops = "http://" + m[1]
		}
		return main != "" && ops != ""
	})
	status := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		url  string
		want int
	}{
		{ops + "/metrics", 200}, {ops + "/healthz", 200},
		{main + "/metrics", 404}, {main + "/healthz", 200},
	} {
		if got := status(tc.url); got != tc.want {
			t.Errorf("GET %s = %d, want %d", tc.url, got, tc.want)
		}
	}
	eventually(t, "/readyz on the metrics listener", &errb, func() bool { return status(ops+"/readyz") == 200 })
	if got := status(main + "/readyz"); got == 200 {
		t.Errorf("GET %s/readyz = 200, want it served on metrics_addr only", main)
	}
}
