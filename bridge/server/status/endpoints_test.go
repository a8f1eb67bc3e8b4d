package status

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// card returns the Endpoints page's card of endpoint name.
func card(t *testing.T, page, name string) string {
	t.Helper()
	start := strings.Index(page, `id="endpoint-`+name+`"`)
	if start < 0 {
		t.Fatalf("the Endpoints page has no card of %s:\n%s", name, page)
	}
	end := strings.Index(page[start:], "</section>")
	return page[start : start+end]
}

// pendingDeliveries gives endpoint n new deliveries, never tried, newer than any before.
func (rg *rig) pendingDeliveries(t *testing.T, endpoint string, n int) {
	t.Helper()
	ctx := context.Background()
	var recs []connectors.Recording
	for i := range n {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("p", i), Version: "1", Name: fmt.Sprint("p", i, ".wav")})
	}
	jobs, err := rg.store.AddRecordings(ctx, "inbox", recs, "", t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		j := &jobs[i]
		j.State, j.UpdatedAt = bridge.StateQueued, t0.Add(time.Minute)
		if err := rg.store.Update(ctx, j, bridge.StateDiscovered, "", bridge.Event{Type: bridge.EventUploaded, JobID: j.ID, Data: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := rg.store.PendingEvents(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == bridge.EventUploaded {
			if err := rg.store.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{endpoint}, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestEndpointsTellTheTruth: an endpoint disabled after a 410, whose newest deliveries all
// wait untried, shows its 410 attempt and last error and "disabled: answered 410 Gone" on the
// Endpoints page and the overview alike; an endpoint with a dead letter is failing, not a
// green enabled; one with nothing wrong is enabled.
func TestEndpointsTellTheTruth(t *testing.T) {
	rg := newRig(t, func(o *Options) {
		o.Endpoints = []Endpoint{{Name: "crm", URL: "https://crm.example/hook"}, {Name: "erp", URL: "https://erp.example/hook"},
			{Name: "ok", URL: "https://ok.example/hook"}}
	})
	ctx := context.Background()
	a, b := rg.heldJob(t, "a.wav"), rg.heldJob(t, "b.wav")
	rg.deadDelivery(t, &a, "crm")
	if err := rg.store.DisableEndpoint(ctx, "crm", "answered 410 Gone", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	rg.pendingDeliveries(t, "crm", 12) // the newest deliveries of crm: pending, never tried
	rg.deadDelivery(t, &b, "erp")
	rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/endpoints")

	crm := card(t, page, "crm")
	contains(t, "crm's card", crm, "disabled: answered 410 Gone", "Last error", "410 Gone", "/resume")
	if strings.Contains(crm, "No attempt yet.") || !strings.Contains(crm, "<td>410</td>") {
		t.Errorf("crm's card shows no 410 attempt:\n%s", crm)
	}
	erp := card(t, page, "erp")
	contains(t, "erp's card", erp, "failing: 1 dead letter", "endpoint-state-failing")
	if strings.Contains(erp, "endpoint-state-enabled") {
		t.Errorf("erp, holding a dead letter, is shown enabled:\n%s", erp)
	}
	contains(t, "ok's card", card(t, page, "ok"), `class="status endpoint-state-enabled">enabled<`, "No attempt yet.")

	_, overview := rg.get(t, rg.client, "/")
	contains(t, "the overview", overview, "disabled: answered 410 Gone", "failing: 1 dead letter")
	for _, word := range []string{">paused<", "off: ", ">on<"} {
		if strings.Contains(page+overview, word) {
			t.Errorf("a page labels an endpoint %q, not with the shared labels", word)
		}
	}
}
