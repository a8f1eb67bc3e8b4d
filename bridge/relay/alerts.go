package relay

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// EventEndpointFailing is sent once when an endpoint has failed for its alert_after: every
// attempt since the first failed one failed (bridge.EndpointAlertStore decides which replica
// sends it).
const EventEndpointFailing = "endpoint.failing"

// AlertStore is what the relay needs of a store to send endpoint.failing: bridge.Store has it.
// A Store without it sends none.
type AlertStore interface {
	bridge.EndpointAlertStore
}

// spell is what this relay saw of one endpoint's attempts since its last delivered one.
type spell struct {
	since    time.Time // the first failed attempt since the last delivered one; zero: none
	lastErr  string
	alerted  bool // this spell was marked in the store (by this replica or another)
	recovers bool // delivered while the store may mark it failing: to clear
}

// spells tracks the endpoints' failing spells from this relay's attempts.
type spells struct {
	mu sync.Mutex
	by map[string]*spell
	// marked are the endpoints the store said were failing at the last check.
	marked map[string]bool
}

// note records an attempt's outcome for endpoint at now: delivered, or failed with why.
func (s *spells) note(endpoint string, delivered bool, why string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*spell{}
	}
	sp := s.by[endpoint]
	if sp == nil {
		sp = &spell{}
		s.by[endpoint] = sp
	}
	if delivered {
		recovers := sp.recovers || sp.alerted || s.marked[endpoint]
		*sp = spell{recovers: recovers}
		return
	}
	if sp.since.IsZero() {
		sp.since = now
	}
	sp.lastErr = why
}

// attemptError says why an attempt failed, for endpoint.failing.
func attemptError(a bridge.Attempt) string {
	if a.Error != "" {
		return a.Error
	}
	return fmt.Sprintf("answered %d", a.Status)
}

// Alert checks the endpoints' failing spells once: it marks in the store (AlertEndpoint, which
// writes endpoint.failing with it) each endpoint that has failed for its AlertAfter, and ends
// the spell of each delivered again. It reports whether it wrote an event. Run calls it
// periodically, Flush after each round; a Store that is not an AlertStore does nothing.
func (r *Relay) Alert(ctx context.Context) (bool, error) {
	r.init()
	st, ok := r.Store.(AlertStore)
	if !ok {
		return false, nil
	}
	now := r.now()
	type todo struct {
		name    string
		clear   bool
		alert   *bridge.EndpointAlert
		failing time.Duration
	}
	var work []todo
	r.spells.mu.Lock()
	for name, sp := range r.spells.by {
		ep := r.byName[name]
		switch {
		case sp.recovers:
			work = append(work, todo{name: name, clear: true})
			sp.recovers = false
		case ep != nil && !sp.since.IsZero() && !sp.alerted && now.Sub(sp.since) >= ep.AlertAfter:
			work = append(work, todo{name: name, alert: &bridge.EndpointAlert{Name: name, Since: sp.since, AlertedAt: now, Error: sp.lastErr},
				failing: ep.AlertAfter})
			sp.alerted = true
		}
	}
	r.spells.mu.Unlock()
	wrote := false
	for _, w := range work {
		if w.clear {
			if ok, err := st.EndpointRecovered(ctx, w.name); err != nil {
				return wrote, err
			} else if ok {
				r.Log.Info("endpoint delivers again", "endpoint", w.name)
			}
			continue
		}
		a := w.alert
		// Endpoint: the failing endpoint is not sent its own alert, even when it names the type.
		ev := bridge.Event{Type: EventEndpointFailing, Endpoint: a.Name, Data: mustJSON(map[string]any{"endpoint": a.Name, "failing_since": a.Since,
			"alert_after": w.failing.String(), "error": a.Error})}
		marked, err := st.AlertEndpoint(ctx, *a, ev)
		if err != nil {
			r.spells.mu.Lock()
			if sp := r.spells.by[a.Name]; sp != nil {
				sp.alerted = false // tried again at the next check
			}
			r.spells.mu.Unlock()
			return wrote, err
		}
		if marked {
			wrote = true
			r.Log.Warn("endpoint failing", "endpoint", a.Name, "since", a.Since, "error", a.Error)
		}
	}
	return wrote, r.readMarked(ctx, st)
}

// readMarked notes which endpoints the store says are failing, so a delivery seen here ends a
// spell another replica marked.
func (r *Relay) readMarked(ctx context.Context, st AlertStore) error {
	alerts, err := st.FailingEndpoints(ctx)
	if err != nil {
		return err
	}
	marked := map[string]bool{}
	for _, a := range alerts {
		marked[a.Name] = true
	}
	r.spells.mu.Lock()
	r.spells.marked = marked
	r.spells.mu.Unlock()
	return nil
}
