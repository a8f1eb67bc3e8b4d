package api_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// recorder is an api.Metrics that remembers what it heard.
type recorder struct {
	mu       sync.Mutex
	requests []string // "METHOD route status"
	waits    map[string]int
	bytes    int64
}

func (r *recorder) APIRequest(route, method, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, method+" "+route+" "+status)
}

func (r *recorder) LimiterWait(class string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waits == nil {
		r.waits = map[string]int{}
	}
	r.waits[class]++
}

func (r *recorder) UploadBytes(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bytes += n
}

// TestMetricsAndLastAnswer: every request is heard under its route template (never a raw id)
// with its status, the limiter's waits by class, the bytes an upload sent; LastAnswer is zero
// before the first answer and moves with each answer, a refusal included.
func TestMetricsAndLastAnswer(t *testing.T) {
	sb := sandboxtest.Start(t)
	rec := &recorder{}
	c := newClient(t, sb, sandboxtest.OwnerKey, func(cfg *api.Config) { cfg.Metrics = rec })
	ctx := context.Background()
	if !c.LastAnswer().IsZero() {
		t.Fatalf("LastAnswer before any request = %v, want zero", c.LastAnswer())
	}
	before := time.Now()
	file := wav(2, 1)
	res := upload(t, c, "a.wav", file, api.UploadParams{})
	if _, err := c.Get(ctx, res.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("Get of an unknown id = %v, want not found", err)
	}
	if at := c.LastAnswer(); at.Before(before) {
		t.Errorf("LastAnswer = %v, want after %v", at, before)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{"POST /transcriptions 201", "GET /transcriptions/{id} 200", "GET /transcriptions/{id} 404"}
	if !slices.Equal(rec.requests, want) {
		t.Errorf("requests heard = %q, want %q", rec.requests, want)
	}
	for _, r := range rec.requests {
		if strings.Contains(r, res.UUID) {
			t.Errorf("a raw id in a route: %q", r)
		}
	}
	if rec.waits["data"] != 3 {
		t.Errorf("limiter waits = %v, want 3 of class data", rec.waits)
	}
	if rec.bytes != int64(len(file)) {
		t.Errorf("upload bytes = %d, want %d", rec.bytes, len(file))
	}
}

// TestNoAnswerIsNoLastAnswer: a request that reaches nothing is heard with status "error" and
// leaves LastAnswer at zero.
func TestNoAnswerIsNoLastAnswer(t *testing.T) {
	rec := &recorder{}
	c, err := api.New(api.Config{BaseURL: closedURL(t), Key: "mk_live_x", UnreachableTimeout: 50 * time.Millisecond,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Workspace(context.Background()); err == nil {
		t.Fatal("Workspace of a closed port succeeded")
	}
	if !c.LastAnswer().IsZero() {
		t.Errorf("LastAnswer = %v after no answer, want zero", c.LastAnswer())
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.requests) == 0 || rec.requests[0] != "GET /workspace error" {
		t.Errorf("requests heard = %q, want GET /workspace error", rec.requests)
	}
}
