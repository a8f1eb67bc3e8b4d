package bridge

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The states of a webhook endpoint, as every page, command and document names them.
const (
	// EndpointEnabled: on, and nothing of its own failing.
	EndpointEnabled = "enabled"
	// EndpointFailing: on, but holding dead letters or retrying deliveries after failed
	// attempts (a warning, not an all-clear).
	EndpointFailing = "failing"
	// EndpointDisabled: off (DisabledEndpoints), after a 410 Gone or paused by hand; its
	// deliveries wait until it is enabled (resumed) again.
	EndpointDisabled = "disabled"
)

// EndpointHealth is what an endpoint's state is told from.
type EndpointHealth struct {
	// Disabled is why the endpoint is off, as DisabledEndpoints says ("answered 410 Gone");
	// empty when it is on.
	Disabled string
	// Dead counts its dead letters; Retrying its pending deliveries with a failed attempt.
	Dead, Retrying int
	// LastStatus and LastError are the last answer and error of its newest dead or retrying
	// delivery, at LastAt (its update).
	LastStatus int
	LastError  string
	LastAt     time.Time
}

// healthScan bounds the dead and the retrying deliveries EndpointsHealth reads (each).
const healthScan = 1000

// EndpointsHealth returns, by name, the endpoints that are disabled, hold dead letters or
// retry deliveries (the newest healthScan of each kind counted); an endpoint it does not name
// is enabled with nothing failing. Errors are the store's, unredacted.
func EndpointsHealth(ctx context.Context, s DeliveryStore) (map[string]*EndpointHealth, error) {
	out := map[string]*EndpointHealth{}
	get := func(name string) *EndpointHealth {
		if out[name] == nil {
			out[name] = &EndpointHealth{}
		}
		return out[name]
	}
	disabled, err := s.DisabledEndpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("endpoints' health: %w", err)
	}
	for name, reason := range disabled {
		get(name).Disabled = reason
	}
	for _, st := range []DeliveryStatus{DeliveryDead, DeliveryPending} {
		ds, err := s.Deliveries(ctx, DeliveryFilter{Status: st, Limit: healthScan})
		if err != nil {
			return nil, fmt.Errorf("endpoints' health: %w", err)
		}
		for _, d := range ds {
			if st == DeliveryPending && d.Attempts == 0 {
				continue // not tried yet: not failing
			}
			h := get(d.Endpoint)
			if st == DeliveryDead {
				h.Dead++
			} else {
				h.Retrying++
			}
			if d.UpdatedAt.After(h.LastAt) {
				h.LastAt, h.LastStatus, h.LastError = d.UpdatedAt, d.LastStatus, d.LastError
			}
		}
	}
	return out, nil
}

// State is EndpointDisabled when the endpoint is off, EndpointFailing when it holds dead
// letters or retries, EndpointEnabled otherwise.
func (h EndpointHealth) State() string {
	switch {
	case h.Disabled != "":
		return EndpointDisabled
	case h.Dead > 0 || h.Retrying > 0:
		return EndpointFailing
	}
	return EndpointEnabled
}

// Label is the state as shown to people, the same words everywhere: "enabled", "failing: 2
// dead letters, 1 retrying", "disabled: answered 410 Gone".
func (h EndpointHealth) Label() string {
	switch h.State() {
	case EndpointDisabled:
		return EndpointDisabled + ": " + h.Disabled
	case EndpointFailing:
		var parts []string
		if h.Dead > 0 {
			parts = append(parts, plural(h.Dead, "dead letter"))
		}
		if h.Retrying > 0 {
			parts = append(parts, fmt.Sprintf("%d retrying", h.Retrying))
		}
		return EndpointFailing + ": " + strings.Join(parts, ", ")
	}
	return EndpointEnabled
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
