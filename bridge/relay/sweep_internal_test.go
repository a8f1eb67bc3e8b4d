package relay

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestSweptEndpointEventSkipsItsEndpoint: an endpoint.disabled the sweep reads from the outbox
// (where the endpoint it is about is in its data alone) goes to the other endpoints only, as
// the bus's copy does.
func TestSweptEndpointEventSkipsItsEndpoint(t *testing.T) {
	r := &Relay{Endpoints: []*Endpoint{{EndpointConfig: EndpointConfig{Name: "crm"}}, {EndpointConfig: EndpointConfig{Name: "erp"}}}}
	for _, c := range []struct {
		ev   bridge.Event
		want []string
	}{
		{bridge.Event{Type: EventEndpointDisabled, Data: json.RawMessage(`{"endpoint":"crm","reason":"answered 410 Gone"}`)}, []string{"erp"}},
		{bridge.Event{Type: EventEndpointDisabled, Data: json.RawMessage(`not json`)}, []string{"crm", "erp"}},
		{bridge.Event{Type: bridge.EventCompleted, JobID: "j", Data: json.RawMessage(`{"endpoint":"crm"}`)}, []string{"crm", "erp"}},
	} {
		ref := bridge.EventRef{Type: c.ev.Type, Endpoint: aboutEndpoint(c.ev)}
		if got := r.targets(ref); !slices.Equal(got, c.want) {
			t.Errorf("targets(%s with data %s) = %v, want %v", c.ev.Type, c.ev.Data, got, c.want)
		}
	}
	// endpoint.failing goes to those naming it, but not to the failing one, even if it does.
	named := []string{EventEndpointFailing}
	r.Endpoints = []*Endpoint{{EndpointConfig: EndpointConfig{Name: "crm", Events: named}}, {EndpointConfig: EndpointConfig{Name: "erp", Events: named}},
		{EndpointConfig: EndpointConfig{Name: "all"}}}
	ev := bridge.Event{Type: EventEndpointFailing, Data: json.RawMessage(`{"endpoint":"crm"}`)}
	if got := r.targets(bridge.EventRef{Type: ev.Type, Endpoint: aboutEndpoint(ev)}); !slices.Equal(got, []string{"erp"}) {
		t.Errorf("targets(endpoint.failing of crm) = %v, want [erp]", got)
	}
}
