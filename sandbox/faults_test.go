package sandbox

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/internal/openapitest"
)

func TestParseFaults(t *testing.T) {
	tests := []struct {
		in   string
		want FaultSpec
		err  bool
	}{
		{"", FaultSpec{}, false},
		{"5xx=0.05,429=0.05,reset=0.01,latency=20ms", FaultSpec{P5xx: 0.05, P429: 0.05, PReset: 0.01, Latency: 20 * time.Millisecond}, false},
		{" 429=1 ", FaultSpec{P429: 1}, false},
		{"5xx=2", FaultSpec{}, true},
		{"5xx=0.6,429=0.6", FaultSpec{}, true},
		{"boom=0.1", FaultSpec{}, true},
		{"latency=fast", FaultSpec{}, true},
		{"5xx", FaultSpec{}, true},
	}
	for _, tc := range tests {
		got, err := ParseFaults(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func countTranscriptions(t *testing.T, h *harness) int {
	var n int
	if err := h.srv.db.QueryRow(`SELECT COUNT(*) FROM transcriptions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForcedFaults(t *testing.T) {
	h := newHarness(t)
	file := wav(2, 0, 1)
	// Fresh connections: Go's transport retries a request carrying Idempotency-Key once when a
	// reused connection breaks, which would hide the injected reset.
	client := &http.Client{Transport: &openapitest.Transport{T: t, Spec: OpenAPI, Prefix: BasePath, Next: &http.Transport{DisableKeepAlives: true}}}
	up := func(fault, idem string) (*http.Response, error) {
		rq, _ := http.NewRequest("POST", h.base+"/transcriptions", bytes.NewReader(file))
		rq.Header.Set("Authorization", "Bearer "+ownerKey)
		rq.Header.Set("Content-Disposition", "attachment; filename=a.wav")
		rq.Header.Set("Idempotency-Key", idem)
		if fault != "" {
			rq.Header.Set("X-Sandbox-Fault", fault)
		}
		return client.Do(rq)
	}
	for _, tc := range []struct {
		fault  string
		status int
		code   string
	}{
		{"503", 503, "service_unavailable"},
		{"502", 502, "service_unavailable"},
		{"429", 429, "rate_limit_exceeded"},
		{"teapot", 400, "invalid_sandbox_fault"},
	} {
		resp, err := up(tc.fault, "k-"+tc.fault)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.status != 400 && resp.Header.Get("Retry-After") == "") {
			t.Errorf("X-Sandbox-Fault %s = %d Retry-After %q, want %d with Retry-After", tc.fault, resp.StatusCode, resp.Header.Get("Retry-After"), tc.status)
		}
	}
	if _, err := up("reset", "k-reset"); err == nil {
		t.Errorf("X-Sandbox-Fault reset answered; want the connection dropped")
	}
	if n := countTranscriptions(t, h); n != 0 {
		t.Errorf("faults before handling stored %d transcriptions, want 0", n)
	}
	// reset-after: the upload lands, its answer is lost; a retry with the key gets the original.
	if _, err := up("reset-after", "k-lost"); err == nil {
		t.Errorf("X-Sandbox-Fault reset-after answered; want the connection dropped")
	}
	if n := countTranscriptions(t, h); n != 1 {
		t.Fatalf("reset-after stored %d transcriptions, want 1", n)
	}
	resp, err := up("", "k-lost")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("retry after a lost answer = %d, want 200 with the original uuid", resp.StatusCode)
	}
	if n := countTranscriptions(t, h); n != 1 {
		t.Errorf("%d transcriptions after the retry, want 1", n)
	}
	// The journal names each fault.
	var j struct{ Items []JournalEntry }
	h.do(req{method: "GET", path: h.ts.URL + ControlPath + "/journal"}).json(t, &j)
	faults := map[string]int{}
	for _, e := range j.Items {
		faults[e.Fault]++
	}
	for _, f := range []string{"503", "429", "reset", "reset-after"} {
		if faults[f] != 1 {
			t.Errorf("journal has %d entries with fault %q, want 1", faults[f], f)
		}
	}
}

// statuses returns the status (or "reset") of n GET /workspace requests.
func statuses(t *testing.T, h *harness, n int) []string {
	out := make([]string, n)
	client := &http.Client{}
	for i := range n {
		rq, _ := http.NewRequest("GET", h.base+"/workspace", nil)
		rq.Header.Set("Authorization", "Bearer "+ownerKey)
		resp, err := client.Do(rq)
		if err != nil {
			out[i] = "reset"
			continue
		}
		resp.Body.Close()
		out[i] = fmt.Sprint(resp.StatusCode)
	}
	return out
}

func TestRandomFaults(t *testing.T) {
	spec, _ := ParseFaults("5xx=0.2,429=0.2,reset=0.1,latency=2ms")
	opt := func(seed int64) harnessOption {
		return func(o *Options) { o.Faults, o.FaultSeed = spec, seed }
	}
	a := statuses(t, newHarness(t, opt(7)), 300)
	b := statuses(t, newHarness(t, opt(7)), 300)
	c := statuses(t, newHarness(t, opt(8)), 300)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same fault seed gave different sequences")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("different fault seeds gave the same sequence")
	}
	counts := map[string]int{}
	for _, s := range a {
		counts[s]++
	}
	five := counts["500"] + counts["502"] + counts["503"]
	// Expected 60, 60, 30 and 150 of 300; the bounds are over 5 standard deviations wide.
	if five < 25 || five > 95 || counts["429"] < 25 || counts["429"] > 95 || counts["reset"] < 8 || counts["reset"] > 60 || counts["200"] < 110 || counts["200"] > 190 {
		t.Errorf("fault mix over 300 requests = %v, want about 20%% 5xx, 20%% 429, 10%% reset", counts)
	}
	// Latency is added to every API request.
	h := newHarness(t, func(o *Options) { o.Faults = FaultSpec{Latency: 30 * time.Millisecond} })
	h.get(ownerKey, "/workspace")
	var j struct{ Items []JournalEntry }
	h.do(req{method: "GET", path: h.ts.URL + ControlPath + "/journal"}).json(t, &j)
	if len(j.Items) != 1 || j.Items[0].DurationMS < 30 {
		t.Errorf("journal = %+v, want one request that took at least the 30 ms latency", j.Items)
	}
}

func TestRateLimits(t *testing.T) {
	h := newHarness(t)
	for i := range 500 {
		if r := h.get(ownerKey, "/workspace"); r.status != 200 {
			t.Fatalf("request %d = %d, want 200 under 500/min", i+1, r.status)
		}
	}
	r := h.get(ownerKey, "/transcriptions")
	if r.status != 429 || r.code() != "rate_limit_exceeded" || r.header.Get("Retry-After") == "" {
		t.Errorf("501st request in a minute = %d %s Retry-After %q, want 429 with Retry-After", r.status, r.code(), r.header.Get("Retry-After"))
	}
	// Per key: another key is not limited.
	if r := h.get(samKey, "/workspace"); r.status != 200 {
		t.Errorf("another key = %d", r.status)
	}
	// The window slides: a minute later the key may go on.
	h.clock.Advance(time.Minute)
	if r := h.get(ownerKey, "/workspace"); r.status != 200 {
		t.Errorf("after a minute = %d, want 200", r.status)
	}
	// Deletions: 30 per minute per key.
	for i := range 30 {
		r := h.do(req{method: "DELETE", path: "/transcriptions/aaaaaaaa-0000-4000-8000-00000000ffff", key: samKey})
		if r.status != 404 {
			t.Fatalf("deletion %d = %d, want 404 under 30/min", i+1, r.status)
		}
	}
	r = h.do(req{method: "DELETE", path: "/transcriptions/aaaaaaaa-0000-4000-8000-00000000ffff", key: samKey})
	if r.status != 429 || r.code() != "rate_limit_exceeded" {
		t.Errorf("31st deletion = %d %s, want 429", r.status, r.code())
	}
}
