package main

import (
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// TestEndpointsListLabels: bridge endpoints list writes an endpoint's state with the status
// page's words: enabled, failing with its counts, disabled with its reason.
func TestEndpointsListLabels(t *testing.T) {
	s, _ := webhook.NewSecret()
	e, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: "https://crm.example/hook", Secrets: []webhook.Secret{s}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		health       *bridge.EndpointHealth
		state, label string
	}{
		{nil, "enabled", "enabled"},
		{&bridge.EndpointHealth{Dead: 2, Retrying: 1}, "failing", "failing: 2 dead letters, 1 retrying"},
		{&bridge.EndpointHealth{Disabled: "answered 410 Gone", Dead: 4}, "disabled", "disabled: answered 410 Gone"},
	} {
		health := map[string]*bridge.EndpointHealth{}
		if c.health != nil {
			health["crm"] = c.health
		}
		v := newEndpointView(e, health)
		if v.State != c.state || v.label != c.label {
			t.Errorf("newEndpointView(crm, %+v) = state %q, label %q; want %q, %q", c.health, v.State, v.label, c.state, c.label)
		}
	}
}
