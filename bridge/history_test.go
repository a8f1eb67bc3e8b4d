package bridge_test

import (
	"context"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestHistoryShowsEveryState (issue 31, point 10): a job's history records processing and
// transcribed, learned by the tracker, on its way from queued to done, even when the
// transcription finished between two polls.
func TestHistoryShowsEveryState(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, "a.wav", wav(3, 1))
	e.run(t)
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil || len(jobs) != 1 || jobs[0].State != bridge.StateDone {
		t.Fatalf("jobs = %+v, %v; want one done", jobs, err)
	}
	h, err := e.store.History(context.Background(), jobs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []bridge.State
	for _, c := range h {
		if len(got) == 0 || got[len(got)-1] != c.To {
			got = append(got, c.To)
		}
	}
	want := []bridge.State{bridge.StateDiscovered, bridge.StateReady, bridge.StateUploading, bridge.StateQueued,
		bridge.StateProcessing, bridge.StateTranscribed, bridge.StateDone}
	if len(got) != len(want) {
		t.Fatalf("history = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("history = %v, want %v", got, want)
		}
	}
}
