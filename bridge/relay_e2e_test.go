package bridge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// TestCompletedWebhookCarriesTheRecord runs files through the pipeline with a relay and checks
// what a CRM receives: transcription.completed with the full record, the source and the job id,
// signed.
func TestCompletedWebhookCarriesTheRecord(t *testing.T) {
	e := newEnv(t, []string{"summary"})
	secret, _ := webhook.NewSecret()
	var mu sync.Mutex
	var got []map[string]any
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(r.Header, body, time.Now(), 0, secret); err != nil {
			t.Errorf("bad signature: %v", err)
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer rx.Close()
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: rx.URL, Secrets: []webhook.Secret{secret}, AllowPrivate: true,
		Events: []string{"transcription.completed"}, Filter: `.data.transcription.metadata.file == "a.wav"`})
	if err != nil {
		t.Fatal(err)
	}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rl := &relay.Relay{Store: e.store, Bus: sub, Poison: poison, Endpoints: []*relay.Endpoint{ep}, API: e.api}
	e.put(t, "a.wav", wav(8, 1))
	e.put(t, "b.wav", wav(8, 2))
	e.run(t)
	if err := rl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("received %d webhooks, want 1 (b.wav filtered out)", len(got))
	}
	data := got[0]["data"].(map[string]any)
	tr := data["transcription"].(map[string]any)
	if got[0]["type"] != "transcription.completed" || data["job_id"] == "" || tr["status"] != "completed" || tr["text"] == nil ||
		len(tr["segments"].([]any)) == 0 || tr["external_id"] == nil || len(tr["prompt_results"].([]any)) != 1 ||
		data["source"].(map[string]any)["item_id"] != "a.wav" {
		t.Errorf("transcription.completed = %v", got[0])
	}
}
