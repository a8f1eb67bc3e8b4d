package relay_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/connectors"
)

// TestOneOutageOneEvent: an endpoint answering 410 to several deliveries in flight at once is
// disabled once, the other endpoints hear one endpoint.disabled, and the disabled endpoint is
// sent none of its own; a Resume followed by more 410s is one more transition, one more event.
func TestOneOutageOneEvent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(int, map[string]any) (int, string) { return 410, "" }) // crm: gone
	s, _ := webhook.NewSecret()
	erp := &receiver{secret: s}
	srv := httptest.NewServer(erp)
	t.Cleanup(srv.Close)
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "erp", URL: srv.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true, Payload: relay.PayloadThin})
	if err != nil {
		t.Fatal(err)
	}
	f.relay.Endpoints = append(f.relay.Endpoints, ep)
	const inFlight = 4 // the relay's PerEndpoint: four requests to crm at once
	round := func(n int) {
		var recs []connectors.Recording
		for i := range inFlight {
			recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("r", n, "-", i), Version: "1", Name: fmt.Sprint("r", n, "-", i, ".wav")})
		}
		added, err := f.store.AddRecordings(ctx, "inbox", recs, "", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for i := range added {
			f.jobs[added[i].ItemID] = &added[i]
			f.emit(t, added[i].ItemID, bridge.EventUploaded)
		}
		f.step(t)
	}
	count := func(rx *receiver, typ string) int {
		rx.mu.Lock()
		defer rx.mu.Unlock()
		n := 0
		for _, m := range rx.received {
			if m["type"] == typ {
				n++
			}
		}
		return n
	}
	tried := func() int {
		f.rx.mu.Lock()
		defer f.rx.mu.Unlock()
		return len(f.rx.tried)
	}

	round(1)
	if n := tried(); n != inFlight {
		t.Fatalf("crm was tried %d times, want its %d deliveries in flight at once", n, inFlight)
	}
	if got := count(erp, relay.EventEndpointDisabled); got != 1 {
		t.Errorf("erp received %d endpoint.disabled for one outage of crm, want 1", got)
	}
	if err := f.store.EnableEndpoint(ctx, "crm"); err != nil { // Resume
		t.Fatal(err)
	}
	round(2)
	if got := count(erp, relay.EventEndpointDisabled); got != 2 {
		t.Errorf("erp received %d endpoint.disabled after a Resume and a second outage, want 2", got)
	}
	ds, err := f.store.Deliveries(ctx, bridge.DeliveryFilter{Endpoint: "crm"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Type == relay.EventEndpointDisabled {
			t.Errorf("crm has a delivery of endpoint.disabled (%s, %s), want none: it is not told of its own state", d.ID, d.Status)
		}
	}
}
