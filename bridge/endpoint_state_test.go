package bridge

import "testing"

// TestEndpointLabel: one set of words for an endpoint's state, wherever it is shown.
func TestEndpointLabel(t *testing.T) {
	for _, c := range []struct {
		h            EndpointHealth
		state, label string
	}{
		{EndpointHealth{}, "enabled", "enabled"},
		{EndpointHealth{Dead: 1}, "failing", "failing: 1 dead letter"},
		{EndpointHealth{Dead: 2, Retrying: 3}, "failing", "failing: 2 dead letters, 3 retrying"},
		{EndpointHealth{Retrying: 1}, "failing", "failing: 1 retrying"},
		{EndpointHealth{Disabled: "answered 410 Gone", Dead: 4}, "disabled", "disabled: answered 410 Gone"},
		{EndpointHealth{Disabled: "paused from the status page by admin"}, "disabled", "disabled: paused from the status page by admin"},
	} {
		if got := c.h.State(); got != c.state {
			t.Errorf("EndpointHealth(%+v).State() = %q, want %q", c.h, got, c.state)
		}
		if got := c.h.Label(); got != c.label {
			t.Errorf("EndpointHealth(%+v).Label() = %q, want %q", c.h, got, c.label)
		}
	}
}
