package bridge

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// SourceHealth is what this process's scans say of one source: up after a scan that
// succeeded, down from the first scan that failed until one succeeds. Every connector's
// failure (a folder gone, credentials refused, a listing that fails) is a failed scan.
type SourceHealth struct {
	// Source is the source's name.
	Source string
	// Up is false while the source's scans fail.
	Up bool
	// Error is the last failed scan's error (secrets redacted), while down.
	Error string
	// Since is when the source went down (its first failed scan of this outage), or, when up,
	// when it came up (its first scan, or the first that succeeded after an outage).
	Since time.Time
	// LastScan is when its last scan ended.
	LastScan time.Time
	// Failures counts the failed scans of this outage (0 while up).
	Failures int
}

// sourceHealth holds each source's SourceHealth, for the sources this process scanned.
type sourceHealth struct {
	mu sync.Mutex
	m  map[string]*SourceHealth
}

// SourceHealth returns the health of the sources this process has scanned, by name. A source
// it never scanned (not yet, or another replica holds its lease) is not in the list.
func (p *Pipeline) SourceHealth() []SourceHealth {
	h := &p.health
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]SourceHealth, 0, len(h.m))
	for _, s := range h.m {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b SourceHealth) int { return strings.Compare(a.Source, b.Source) })
	return out
}

// noteScan records the outcome of a scan of source (err nil: it succeeded) in its health and
// metrics. An outage is logged once at ERROR when it starts and once at INFO when it ends;
// the failed scans between are logged at DEBUG only.
func (p *Pipeline) noteScan(source string, err error) {
	if errors.Is(err, errLeaseLost) {
		return // another replica took the source over: says nothing of the source
	}
	now := p.now()
	h := &p.health
	h.mu.Lock()
	if h.m == nil {
		h.m = map[string]*SourceHealth{}
	}
	s := h.m[source]
	first := s == nil
	if first {
		s = &SourceHealth{Source: source, Up: true, Since: now}
		h.m[source] = s
	}
	wasUp, since, failures := s.Up, s.Since, s.Failures
	s.LastScan = now
	if err == nil {
		if !wasUp {
			s.Up, s.Error, s.Since, s.Failures = true, "", now, 0
		}
	} else {
		if wasUp {
			s.Since, s.Failures = now, 0
		}
		s.Up, s.Error = false, api.Redact(err.Error())
		s.Failures++
	}
	h.mu.Unlock()
	if err == nil {
		if !wasUp {
			p.log().Info("source can be read again", "source", source, "down_for", now.Sub(since).Round(time.Second).String(), "failed_scans", failures)
		}
		return // Scan counted the success (Metrics.Scanned)
	}
	p.metrics().ScanFailed(source)
	if wasUp || first {
		// Once per outage: bridge_source_up, /readyz and the status page show it meanwhile.
		p.log().Error("source cannot be read", "source", source, "error", err)
		return
	}
	p.log().Debug("source still cannot be read", "source", source, "failed_scans", failures+1, "error", err)
}
