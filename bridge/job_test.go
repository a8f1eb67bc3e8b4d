package bridge_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// TestJobJSONKeepsItsFields: the recording a job holds (connectors.Recording) flattens into the
// job's JSON under the names it always had, and a recording stored before it moved to
// connectors loads whole.
func TestJobJSONKeepsItsFields(t *testing.T) {
	at := time.Date(2026, 1, 2, 9, 30, 0, 0, time.UTC)
	j := bridge.Job{ID: "j1", Recording: connectors.Recording{Source: "inbox", ItemID: "a.wav", Version: "v1", Name: "a.wav",
		Size: 2048, ModTime: at, Link: "https://x", Owner: &connectors.Owner{Provider: "zoom", ID: "u1", Email: "a@b.c"},
		SourceExternalID: "s:1", Fields: map[string]string{"f": "1"}, Metadata: map[string]string{"m": "1"}},
		State: bridge.StateHeld, Reason: "r", Author: "email:a@b.c", ExternalID: "e", Metadata: json.RawMessage(`{"k":"v"}`),
		IdempotencyKey: "k", AttemptAt: at, Attempts: 1, TranscriptionID: "t", RequiredMinutes: 2, NextAt: at, CreatedAt: at, UpdatedAt: at}
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(b, &fields)
	var got []string
	for k := range fields {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"attempt_at", "attempts", "author", "created_at", "external_id", "fields", "id", "idempotency_key", "item_id", "link",
		"metadata", "mod_time", "name", "next_at", "owner", "reason", "required_minutes", "size", "source", "source_external_id",
		"state", "transcription_id", "updated_at", "version"}
	if !slices.Equal(got, want) {
		t.Errorf("job JSON fields = %v, want %v", got, want)
	}
	if string(fields["owner"]) != `{"provider":"zoom","id":"u1","email":"a@b.c"}` {
		t.Errorf("owner = %s", fields["owner"])
	}

	// As the store keeps it (the recording column), before the move.
	stored := `{"source":"inbox","item_id":"a.wav","version":"v1","name":"a.wav","size":2048,"mod_time":"2026-01-02T09:30:00Z",` +
		`"link":"https://x","owner":{"provider":"zoom","id":"u1","email":"a@b.c"},"source_external_id":"s:1",` +
		`"fields":{"f":"1"},"metadata":{"m":"1"}}`
	var back bridge.Job
	if err := json.Unmarshal([]byte(stored), &back.Recording); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back.Recording); string(again) != stored {
		t.Errorf("stored recording reads back as\n%s\nwant\n%s", again, stored)
	}
}
