package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestSoakResults: the judge fails a soak whose figure grows more than 5% over the second half
// and passes a flat one; below soakWarm only the WAL (and the deliveries) are judged. The
// goroutines and files judged are those beside the HTTP connections', which are judged against
// their pools' bound at any length: a pool that fills passes, a leak of connections fails.
func TestSoakResults(t *testing.T) {
	// run returns a soak of d sampled twelve times, every figure flat but the one grow raises
	// by 1% of its start a sample (about 6% over the second half).
	run := func(d time.Duration, grow string) []soakSample {
		var out []soakSample
		for i := 1; i <= 12; i++ {
			s := soakSample{at: d * time.Duration(i) / 12, rss: 20, otherGoroutines: 40, otherFiles: 30, dbSize: float64(i), jobs: float64(i * 100), walSize: 4}
			up := 1 + 0.01*float64(i)
			switch grow {
			case "rss":
				s.rss *= up
			case "goroutines":
				s.otherGoroutines *= up
			case "open_files":
				s.otherFiles *= up
			case "pool": // the pools fill to their bound: all the goroutines and files rise
				s.conns = float64(min(i*3, soakConnBound))
			case "conn_leak":
				s.conns = float64(i * 3)
			}
			s.goroutines, s.files = s.otherGoroutines+2*s.conns, s.otherFiles+s.conns
			switch grow {
			case "db_per_job":
				s.dbSize *= up
			case "wal":
				s.walSize *= up
			}
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		d          time.Duration
		grow       string
		deliveries int64
		failed     string // the one figure that must fail; "" none
	}{
		{time.Hour, "", 100, ""},
		{time.Hour, "rss", 100, "soak_rss_growth"},
		{time.Hour, "goroutines", 100, "soak_goroutines_growth"},
		{time.Hour, "open_files", 100, "soak_open_files_growth"},
		{time.Hour, "db_per_job", 100, "soak_db_per_job_growth"},
		{time.Hour, "wal", 100, "soak_wal_growth"},
		{time.Hour, "", 0, "soak_deliveries"},
		{time.Hour, "pool", 100, ""},
		{time.Hour, "conn_leak", 100, "soak_http_connections"},
		{2 * time.Minute, "conn_leak", 100, "soak_http_connections"},
		{2 * time.Minute, "", 100, ""},
		{2 * time.Minute, "rss", 100, ""}, // reported below soakWarm
		{2 * time.Minute, "goroutines", 100, ""},
		{2 * time.Minute, "wal", 100, "soak_wal_growth"},
	}
	for _, tc := range tests {
		results, charts := soakResults(run(tc.d, tc.grow), tc.d, tc.deliveries)
		if len(charts) != len(soakMetrics) {
			t.Errorf("soakResults(%s, %q grows) charts = %d, want %d", tc.d, tc.grow, len(charts), len(soakMetrics))
		}
		var failed []string
		for _, r := range results {
			if !r.Pass {
				failed = append(failed, r.Name)
			}
		}
		want := []string{}
		if tc.failed != "" {
			want = []string{tc.failed}
		}
		if len(failed) != len(want) || len(want) == 1 && failed[0] != want[0] {
			t.Errorf("soakResults(%s, %q grows, %d deliveries) failed = %v, want %v (%+v)", tc.d, tc.grow, tc.deliveries, failed, want, results)
		}
	}
}

// TestHTTPConnCount: httpConnGoroutines counts a kept-alive client connection (a reading and a
// writing goroutine), and a connection whose response body is left open stays counted after
// its client closes its idle connections, as soak_http_connections_left expects.
func TestHTTPConnCount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	count := func() int {
		reads, _ := httpConnGoroutines()
		return reads
	}
	// settle waits up to 5 s for count to reach want (goroutines of a closed connection end on
	// their own), then for as many writing goroutines as reading ones.
	settle := func(want int) int {
		n := count()
		for deadline := time.Now().Add(5 * time.Second); n != want && time.Now().Before(deadline); n = count() {
			time.Sleep(20 * time.Millisecond)
		}
		reads, writes := httpConnGoroutines()
		for deadline := time.Now().Add(5 * time.Second); reads != writes && time.Now().Before(deadline); reads, writes = httpConnGoroutines() {
			time.Sleep(20 * time.Millisecond)
		}
		if reads != writes {
			t.Errorf("httpConnGoroutines() = %d reading, %d writing, want as many", reads, writes)
		}
		return n
	}
	base := count()
	get := func() *http.Response {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close() // back to the pool, kept alive
	if n := settle(base + 1); n != base+1 {
		t.Errorf("with one kept-alive connection, httpConnGoroutines() = %d connections, want %d", n, base+1)
	}
	client.CloseIdleConnections()
	if n := settle(base); n != base {
		t.Errorf("after CloseIdleConnections, httpConnGoroutines() = %d connections, want %d", n, base)
	}
	leaked := get() // its body left open: the connection stays out of the pool
	client.CloseIdleConnections()
	if n := settle(base + 1); n != base+1 {
		t.Errorf("with a body left open, after CloseIdleConnections, httpConnGoroutines() = %d connections, want %d", n, base+1)
	}
	leaked.Body.Close()
	client.CloseIdleConnections()
	if n := settle(base); n != base {
		t.Errorf("with the body closed, after CloseIdleConnections, httpConnGoroutines() = %d connections, want %d", n, base)
	}
}
