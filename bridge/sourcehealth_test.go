package bridge_test

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// scanMetrics counts what the pipeline reports of its scans; the rest is ignored.
type scanMetrics struct {
	mu              sync.Mutex
	scanned, failed map[string]int
}

func (m *scanMetrics) Upload(string)                    {}
func (m *scanMetrics) Retry(string)                     {}
func (m *scanMetrics) TrackerLag(time.Duration)         {}
func (m *scanMetrics) Discovered(string, time.Duration) {}
func (m *scanMetrics) Scanned(s string, _ time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scanned[s]++
}
func (m *scanMetrics) ScanFailed(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed[s]++
}

// TestSourceOutageIsVisible (issue 31, point 5): a source whose folder is renamed away is down
// (its health names the error and since when, its failed scans are counted), the outage is
// logged at ERROR once however many scans fail, and once more when it can be read again.
func TestSourceOutageIsVisible(t *testing.T) {
	e := newEnv(t, nil)
	var logs bytes.Buffer
	var mu sync.Mutex
	e.p.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m := &scanMetrics{scanned: map[string]int{}, failed: map[string]int{}}
	e.p.Metrics = m
	e.put(t, "a.wav", wav(3, 1))
	e.run(t)
	if h := e.p.SourceHealth(); len(h) != 1 || !h[0].Up {
		t.Fatalf("SourceHealth() after a good scan = %+v, want inbox up", h)
	}
	if err := os.Rename(e.inbox, e.inbox+".away"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.run(t)
	}
	h := e.p.SourceHealth()
	if len(h) != 1 || h[0].Up || !strings.Contains(h[0].Error, e.inbox) || h[0].Since.IsZero() || h[0].Failures < 3 {
		t.Fatalf("SourceHealth() with the folder gone = %+v, want inbox down naming %s, since when, 3+ failures", h, e.inbox)
	}
	if m.failed["inbox"] != h[0].Failures {
		t.Errorf("ScanFailed(inbox) counted %d, want %d", m.failed["inbox"], h[0].Failures)
	}
	mu.Lock()
	got := strings.Count(logs.String(), "level=ERROR")
	mu.Unlock()
	if got != 1 {
		t.Errorf("%d ERROR lines for one outage of %d failed scans, want 1:\n%s", got, h[0].Failures, logs.String())
	}
	if err := os.Rename(e.inbox+".away", e.inbox); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	if h := e.p.SourceHealth(); len(h) != 1 || !h[0].Up || h[0].Error != "" || h[0].Failures != 0 {
		t.Errorf("SourceHealth() with the folder back = %+v, want inbox up", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), `level=INFO msg="source can be read again" source=inbox`) {
		t.Errorf("the end of the outage is not logged:\n%s", logs.String())
	}
}

// lockedWriter serialises writes from the pipeline's goroutines.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
