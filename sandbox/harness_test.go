package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/internal/openapitest"
)

// Keys of testdata/seed.yaml.
const (
	ownerKey  = "mk_live_owner_full"
	readKey   = "mk_live_readonly"
	samKey    = "mk_live_sam_writer"
	ritaKey   = "mk_live_rita_writer"
	otherKey  = "mk_live_other_full"
	tightKey  = "mk_live_tight"
	oauthKey  = "oauth_owner_token"
	ownerID   = "aaaaaaaa-0000-4000-8000-000000000001"
	samID     = "aaaaaaaa-0000-4000-8000-000000000002"
	goneID    = "aaaaaaaa-0000-4000-8000-000000000003"
	ritaID    = "aaaaaaaa-0000-4000-8000-000000000004"
	salesID   = "bbbbbbbb-0000-4000-8000-000000000001"
	boardID   = "bbbbbbbb-0000-4000-8000-000000000002"
	acmeID    = "11111111-1111-4111-8111-111111111111"
	tightWSID = "33333333-3333-4333-8333-333333333333"
)

// testClock is real time shifted by an offset that tests can advance.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// harness is a sandbox on a real SQLite file behind real HTTP on loopback. Every API answer it
// sees is validated against the OpenAPI description.
type harness struct {
	t     testing.TB
	srv   *Server
	ts    *httptest.Server
	base  string
	clock *testClock
	http  *http.Client
}

type harnessOption func(*Options)

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	seed, err := LoadSeed("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{}
	o := Options{
		DBPath:    filepath.Join(t.TempDir(), "sandbox.db"),
		Seed:      seed,
		TimeScale: 0.001,
		Now:       clock.Now,
		MediaDir:  t.TempDir(),
		Logf:      t.Logf,
	}
	for _, opt := range opts {
		opt(&o)
	}
	srv, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	h := &harness{t: t, srv: srv, ts: ts, base: ts.URL + BasePath, clock: clock}
	h.http = &http.Client{Transport: &openapitest.Transport{T: t, Spec: OpenAPI, Prefix: BasePath, Skip: []string{"/openapi.yaml"}}}
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return h
}

// response is a finished answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r *response) code() string {
	var e apiError
	json.Unmarshal(r.body, &e)
	return e.Code
}

func (r *response) m() map[string]any {
	var v map[string]any
	json.Unmarshal(r.body, &v)
	return v
}

// req is one request under construction.
type req struct {
	method, path string
	key          string
	header       map[string]string
	body         []byte
	jsonBody     any
}

func (h *harness) do(rq req) *response {
	h.t.Helper()
	var body io.Reader
	if rq.jsonBody != nil {
		b, _ := json.Marshal(rq.jsonBody)
		body = bytes.NewReader(b)
	} else if rq.body != nil {
		body = bytes.NewReader(rq.body)
	}
	url := rq.path
	if !strings.HasPrefix(url, "http") {
		url = h.base + rq.path
	}
	r, err := http.NewRequest(rq.method, url, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if rq.jsonBody != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if rq.key != "" {
		r.Header.Set("Authorization", "Bearer "+rq.key)
	}
	for k, v := range rq.header {
		r.Header.Set(k, v)
	}
	resp, err := h.http.Do(r)
	if err != nil {
		h.t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (h *harness) get(key, path string) *response {
	return h.do(req{method: "GET", path: path, key: key})
}

// upload sends file bytes named name with extra headers and query.
func (h *harness) upload(key, name, query string, file []byte, headers map[string]string) *response {
	h.t.Helper()
	hd := map[string]string{"Content-Disposition": fmt.Sprintf(`attachment; filename="%s"`, name)}
	for k, v := range headers {
		hd[k] = v
	}
	path := "/transcriptions"
	if query != "" {
		path += "?" + query
	}
	return h.do(req{method: "POST", path: path, key: key, header: hd, body: file})
}

// mustUpload uploads and fails the test unless the answer is 201; it returns the uuid.
func (h *harness) mustUpload(key, name, query string, file []byte, headers map[string]string) string {
	h.t.Helper()
	r := h.upload(key, name, query, file, headers)
	if r.status != http.StatusCreated {
		h.t.Fatalf("upload %s = %d %s, want 201", name, r.status, r.body)
	}
	var u uploadResponse
	r.json(h.t, &u)
	return u.UUID
}

// record fetches the full record of id.
func (h *harness) record(key, id string) map[string]any {
	h.t.Helper()
	r := h.get(key, "/transcriptions/"+id)
	if r.status != 200 {
		h.t.Fatalf("GET %s = %d %s", id, r.status, r.body)
	}
	return r.m()
}

// waitStatus polls until id reaches one of the terminal statuses (and all reports are
// terminal) and returns the record.
func (h *harness) waitDone(key, id string) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		rec := h.record(key, id)
		if terminal(rec) {
			return rec
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("transcription %s did not finish: %v", id, h.record(key, id)["status"])
	return nil
}

func terminal(rec map[string]any) bool {
	switch rec["status"] {
	case "queued", "processing":
		return false
	}
	for _, rep := range rec["prompt_results"].([]any) {
		switch rep.(map[string]any)["status"] {
		case "queued", "processing":
			return false
		}
	}
	return true
}

// wav is mediatest.WAV: a valid WAV of seconds at byteRate (8000 when 0), samples from seed.
func wav(seconds float64, byteRate int, seed uint64) []byte {
	return mediatest.WAV(seconds, byteRate, seed)
}
