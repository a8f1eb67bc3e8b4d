package bridge_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// TestTeamsPaymentRequiredHolds (issue 29, point 1): Graph answering a recording's content
// with 402 PaymentRequired ("Evaluation capacity for the month has exceeded") holds the job
// source_blocked with Graph's words, to be tried again in a day, and so every later Teams
// recording; none is skipped or failed. Once Graph serves the content again, a release by
// hand uploads each once.
func TestTeamsPaymentRequiredHolds(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	m4a, err := os.ReadFile("testdata/speech.m4a")
	if err != nil {
		t.Fatal(err)
	}
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, time.Now().Add(-2*time.Hour), m4a)
	src, err := teams.New(teams.Config{TenantID: teamstest.TenantID, ClientID: teamstest.ClientID, ClientSecret: teamstest.ClientSecret,
		GraphURL: fake.URL, LoginURL: fake.URL, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	fake.PaymentRequired(true)
	scan(t, e.p)
	step(t, e.p)
	fake.AddRecording(sam.ID, time.Now().Add(-time.Hour), m4a) // a later recording meets the same refusal
	scan(t, e.p)
	step(t, e.p)
	jobs, err := e.store.Jobs(ctx, bridge.JobFilter{})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs = %d, %v; want 2", len(jobs), err)
	}
	for _, j := range jobs {
		if j.State != bridge.StateHeld || j.Hold != bridge.HoldSourceBlocked || !strings.Contains(j.Reason, teamstest.PaymentMessage) {
			t.Errorf("job %s after Graph's 402 = %s/%s (%q), want held %s with Graph's message", j.ID, j.State, j.Hold, j.Reason, bridge.HoldSourceBlocked)
		}
		if got := j.NextAt.Sub(c.Now()); got != connectors.DefaultBlockedWait {
			t.Errorf("job %s tried again in %v, want %v", j.ID, got, connectors.DefaultBlockedWait)
		}
	}
	if posts, _ := e.uploads(t); len(posts) != 0 {
		t.Errorf("%d uploads while Graph refused the content, want none", len(posts))
	}

	fake.PaymentRequired(false)
	for _, j := range jobs {
		if _, err := bridge.Release(ctx, e.store, j.ID, "", c.Now()); err != nil {
			t.Fatalf("Release(%s) = %v", j.ID, err)
		}
	}
	step(t, e.p)
	if _, accepted := e.uploads(t); accepted != 2 {
		t.Errorf("%d uploads accepted after the release, want 2", accepted)
	}
}
