package bridge

import (
	"testing"
	"time"
)

// TestEndpointLabel: one set of words for an endpoint's state, wherever it is shown.
func TestEndpointLabel(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	alert := &EndpointAlert{Name: "crm", Since: now.Add(-72*time.Minute - 30*time.Second), AlertedAt: now.Add(-12 * time.Minute), Error: "answered 503"}
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
		{EndpointHealth{Alert: alert, At: now}, "failing", "failing for 1h12m: answered 503"},
		{EndpointHealth{Alert: alert, At: now, Retrying: 2, LastAt: now.Add(-time.Minute), LastStatus: 502}, "failing", "failing for 1h12m: answered 502 (2 retrying)"},
		{EndpointHealth{Alert: alert, At: now, Dead: 1, LastAt: now.Add(-time.Minute), LastError: "dial tcp: connection refused"}, "failing", "failing for 1h12m: dial tcp: connection refused (1 dead letter)"},
		{EndpointHealth{Alert: alert, At: now, Retrying: 1, LastAt: now.Add(-time.Hour), LastError: "timeout"}, "failing", "failing for 1h12m: answered 503 (1 retrying)"},
		{EndpointHealth{Alert: alert, At: alert.Since.Add(45 * time.Second)}, "failing", "failing for 45s: answered 503"},
		{EndpointHealth{Alert: alert, At: alert.Since.Add(2*time.Hour + 59*time.Second)}, "failing", "failing for 2h: answered 503"},
		{EndpointHealth{Alert: alert, At: now, Disabled: "answered 410 Gone"}, "disabled", "disabled: answered 410 Gone"},
	} {
		if got := c.h.State(); got != c.state {
			t.Errorf("EndpointHealth(%+v).State() = %q, want %q", c.h, got, c.state)
		}
		if got := c.h.Label(); got != c.label {
			t.Errorf("EndpointHealth(%+v).Label() = %q, want %q", c.h, got, c.label)
		}
	}
}
