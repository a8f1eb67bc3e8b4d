package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Check is one readiness check: Run returns nil when what Name names is ready, else the reason.
// A check must be cheap and must never call the upstream API: it reads what the running
// bridge already knows, or asks its own store and bus.
type Check struct {
	// Name identifies the check in /readyz's answer ("store", "migrations", "api", "bus").
	Name string
	// Run reports nil when ready, else why not.
	Run func(ctx context.Context) error
	// Advisory checks are reported but leave the bridge ready when they fail ("sources": a
	// source that cannot be read is shown, and taking the bridge out of service would not help).
	Advisory bool
}

// CheckResult is one check's outcome in /readyz's answer.
type CheckResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Advisory is true for a check whose failure leaves the bridge ready (Check.Advisory).
	Advisory bool `json:"advisory,omitempty"`
}

// Readiness is /readyz's answer: "ready" with every check passing, else "unready".
type Readiness struct {
	Status string        `json:"status"`
	Checks []CheckResult `json:"checks"`
}

// DefaultCheckTimeout bounds each check of Ready when its timeout is zero.
const DefaultCheckTimeout = 2 * time.Second

// Evaluate runs checks at once, each bounded by timeout (DefaultCheckTimeout when zero; a
// check still running then fails with "no answer within …"), and returns their outcomes in the
// order given. It never fails itself: a check's failure is in its result.
func Evaluate(ctx context.Context, timeout time.Duration, checks ...Check) Readiness {
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	out := Readiness{Status: "ready", Checks: make([]CheckResult, len(checks))}
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.Run(cctx) }()
			var err error
			select {
			case err = <-done:
			case <-cctx.Done():
				err = fmt.Errorf("no answer within %s", timeout)
			}
			out.Checks[i] = CheckResult{Name: c.Name, OK: err == nil, Advisory: c.Advisory}
			if err != nil {
				out.Checks[i].Error = err.Error()
			}
		})
	}
	wg.Wait()
	for _, r := range out.Checks {
		if !r.OK && !r.Advisory {
			out.Status = "unready"
		}
	}
	return out
}

// Ready returns the handler of GET /readyz: 200 and {"status":"ready","checks":[…]} when every
// check passes, else 503 with "unready" and each check's outcome, the failing ones with their
// error. It needs no credentials and costs what the checks cost.
func Ready(timeout time.Duration, checks ...Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd := Evaluate(r.Context(), timeout, checks...)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if rd.Status != "ready" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(rd)
	})
}

// StoreCheck is the check "store": ready when ping, a cheap query, answers without error; else
// it fails with "store unreachable: " and ping's error.
func StoreCheck(ping func(ctx context.Context) error) Check {
	return Check{Name: "store", Run: func(ctx context.Context) error {
		if err := ping(ctx); err != nil {
			return fmt.Errorf("store unreachable: %w", err)
		}
		return nil
	}}
}

// SchemaCheck is the check "migrations": ready when the store's schema version (read by
// version) is want, the version this binary carries; it fails naming both versions otherwise
// (older: run bridge migrate; newer: a newer bridge migrated the database), or with the
// query's error.
func SchemaCheck(version func(ctx context.Context) (int, error), want int) Check {
	return Check{Name: "migrations", Run: func(ctx context.Context) error {
		v, err := version(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("schema version unreadable: %w", err)
		case v < want:
			return fmt.Errorf("schema version %d, this bridge needs %d: run bridge migrate", v, want)
		case v > want:
			return fmt.Errorf("schema version %d is newer than this bridge knows (%d)", v, want)
		}
		return nil
	}}
}

// APICheck is the check "api": ready when the API last answered (last, e.g.
// api.Client.LastAnswer) within the last within before now (time.Now when nil). It reads a
// time the bridge keeps and never calls the API. It fails with "no answer for 2m0s", or when
// the API has not answered since the start.
func APICheck(last func() time.Time, within time.Duration, now func() time.Time) Check {
	if now == nil {
		now = time.Now
	}
	return Check{Name: "api", Run: func(context.Context) error {
		at := last()
		if at.IsZero() {
			return errors.New("the API has not answered since the bridge started")
		}
		if age := now().Sub(at); age > within {
			return fmt.Errorf("no answer for %s (want one within %s)", age.Round(time.Second), within)
		}
		return nil
	}}
}

// BusCheck is the check "bus": ready when consuming (e.g. relay.Relay.Consuming) reports
// the event bus read; its error otherwise.
func BusCheck(consuming func(ctx context.Context) error) Check {
	return Check{Name: "bus", Run: consuming}
}

// SourcesCheck is the advisory check "sources": it fails naming each source whose scans fail
// (health, e.g. bridge.Pipeline.SourceHealth), with its error and since when, and leaves the
// bridge ready (see Check.Advisory). It reads what the scans noted and calls nothing.
func SourcesCheck(health func() []bridge.SourceHealth) Check {
	return Check{Name: "sources", Advisory: true, Run: func(context.Context) error {
		var down []string
		for _, s := range health() {
			if !s.Up {
				down = append(down, fmt.Sprintf("%s: %s (since %s, %d failed scan(s))", s.Source, s.Error, s.Since.UTC().Format(time.RFC3339), s.Failures))
			}
		}
		if len(down) > 0 {
			return fmt.Errorf("cannot be read: %s", strings.Join(down, "; "))
		}
		return nil
	}}
}
