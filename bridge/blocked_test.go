package bridge_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// blockingSource is a real folder whose downloads a source's account refuses while blocked is
// set: Open answers with err (a connectors.Blocked refusal, as the connectors make of a 402 or
// a licence 403).
type blockingSource struct {
	connectors.Source
	blocked atomic.Bool
	err     error
}

func (s *blockingSource) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	if s.blocked.Load() {
		return nil, s.err
	}
	return s.Source.Open(ctx, r)
}

// TestBlockedSourceHoldsNeverFails (issue 29, point 1): a source refusing the download until
// its account is set up (Graph's 402 "Evaluation capacity for the month has exceeded") holds the
// job with the service's words, announced once, tried again daily, never failed or skipped;
// a release by hand (no author) tries it at once, and once the source serves it the job is
// uploaded once.
func TestBlockedSourceHoldsNeverFails(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	const words = "teams download of sam@acme.test's recording: 402 PaymentRequired: Evaluation capacity for the month has exceeded"
	src := &blockingSource{Source: e.p.Sources["inbox"].Source, err: connectors.Blocked(errors.New(words), 0)}
	src.blocked.Store(true)
	e.p.Sources["inbox"].Source = src
	t0 := time.Now()
	c := &clock{t: t0}
	e.p.Now = c.Now
	e.put(t, "call.wav", wav(2, 1))
	scan(t, e.p)
	step(t, e.p)
	j := e.onlyJob(t)
	if j.State != bridge.StateHeld || j.Hold != bridge.HoldSourceBlocked {
		t.Fatalf("after a 402: job %s/%s (%q), want held %s", j.State, j.Hold, j.Reason, bridge.HoldSourceBlocked)
	}
	for _, want := range []string{"source_blocked: ", "inbox", "Evaluation capacity for the month has exceeded", "bridge jobs release"} {
		if !strings.Contains(j.Reason, want) {
			t.Errorf("held with reason %q; want it to name %q", j.Reason, want)
		}
	}
	if got, want := j.NextAt.Sub(t0), connectors.DefaultBlockedWait; got != want {
		t.Errorf("held for %v, want tried again in %v", got, want)
	}

	// A day later, still refused: held again in place, not announced twice, nothing sent.
	c.set(t0.Add(25 * time.Hour))
	step(t, e.p)
	if j = e.onlyJob(t); j.State != bridge.StateHeld || j.Hold != bridge.HoldSourceBlocked {
		t.Fatalf("a day later: job %s/%s (%q), want still held", j.State, j.Hold, j.Reason)
	}
	if n := e.events(t)[bridge.EventHeld]; n != 1 {
		t.Errorf("%d %s events after two refusals, want 1", n, bridge.EventHeld)
	}
	if posts, _ := e.uploads(t); len(posts) != 0 {
		t.Errorf("%d uploads reached the service while the source refused, want none", len(posts))
	}

	// Released by hand (the licence bought): tried at once, not a day later.
	src.blocked.Store(false)
	if _, err := bridge.Release(ctx, e.store, j.ID, "", c.Now()); err != nil {
		t.Fatalf("Release(%s, no author) = %v", j.ID, err)
	}
	step(t, e.p)
	if j = e.onlyJob(t); j.State != bridge.StateQueued {
		t.Errorf("after the release: job %s (%q), want queued", j.State, j.Reason)
	}
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1", accepted)
	}
}

// TestBlockedWaitNamedBySource: a refusal that names when its quota renews (Drive's
// downloadQuotaExceeded, Zoom's daily limit) is tried again then, not a day later.
func TestBlockedWaitNamedBySource(t *testing.T) {
	e := newEnv(t, nil)
	src := &blockingSource{Source: e.p.Sources["inbox"].Source, err: connectors.Blocked(errors.New("403 downloadQuotaExceeded"), 6*time.Hour)}
	src.blocked.Store(true)
	e.p.Sources["inbox"].Source = src
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	e.put(t, "call.wav", wav(2, 1))
	scan(t, e.p)
	step(t, e.p)
	j := e.onlyJob(t)
	if j.State != bridge.StateHeld || j.NextAt.Sub(c.Now()) != 6*time.Hour {
		t.Errorf("job %s (%q) next at %v, want held and tried again in 6h", j.State, j.Reason, j.NextAt.Sub(c.Now()))
	}
}

// TestReleaseWithoutAuthor: a job waiting for an author is not released without one; a job held
// for another reason is due at once, still held, its hold kept.
func TestReleaseWithoutAuthor(t *testing.T) {
	ctx := context.Background()
	s, held := heldJob(t, bridge.StateHeld) // held unmapped
	if _, err := bridge.Release(ctx, s, held.ID, "", time.Now()); !errors.Is(err, bridge.ErrNeedsAuthor) {
		t.Errorf("Release(unmapped, no author) = %v, want ErrNeedsAuthor", err)
	}
	held.Hold = bridge.HoldSourceBlocked
	held.NextAt = time.Now().Add(24 * time.Hour)
	if err := bridge.Move(ctx, s, &held, bridge.StateHeld, "source_blocked: source inbox: 402", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := bridge.Release(ctx, s, held.ID, "", time.Now()); err != nil {
		t.Fatalf("Release(source_blocked, no author) = %v", err)
	}
	got, _ := s.Job(ctx, held.ID)
	if got.State != bridge.StateHeld || got.Hold != bridge.HoldSourceBlocked || !got.NextAt.IsZero() || !strings.HasPrefix(got.Reason, "released by hand") {
		t.Errorf("after Release: %s/%s next %v (%q), want held source_blocked, due now, released by hand", got.State, got.Hold, got.NextAt, got.Reason)
	}
}
