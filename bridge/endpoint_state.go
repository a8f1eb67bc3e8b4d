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
	// attempts, or failing for its alert_after (endpoint.failing sent): a warning, not an
	// all-clear.
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
	// Alert is the endpoint's failing spell once it lasted its alert_after (endpoint.failing
	// was sent, EndpointAlertStore), until an attempt is delivered again; nil otherwise.
	Alert *EndpointAlert
	// At is when the health was read: the alert's "failing for" is told from it.
	At time.Time
}

// HealthStore is what EndpointsHealth reads: the deliveries, the disabled endpoints and the
// failing ones.
type HealthStore interface {
	DeliveryStore
	EndpointAlertStore
}

// healthScan bounds the dead and the retrying deliveries EndpointsHealth reads (each).
const healthScan = 1000

// EndpointsHealth returns, by name, the endpoints that are disabled, alerted as failing, hold
// dead letters or retry deliveries (the newest healthScan of each kind counted), as of now; an
// endpoint it does not name is enabled with nothing failing. Errors are the store's, unredacted.
func EndpointsHealth(ctx context.Context, s HealthStore, now time.Time) (map[string]*EndpointHealth, error) {
	out := map[string]*EndpointHealth{}
	get := func(name string) *EndpointHealth {
		if out[name] == nil {
			out[name] = &EndpointHealth{At: now}
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
	alerts, err := s.FailingEndpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("endpoints' health: %w", err)
	}
	for _, a := range alerts {
		get(a.Name).Alert = &a
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

// State is EndpointDisabled when the endpoint is off, EndpointFailing when it is alerted as
// failing or holds dead letters or retries, EndpointEnabled otherwise.
func (h EndpointHealth) State() string {
	switch {
	case h.Disabled != "":
		return EndpointDisabled
	case h.Alert != nil || h.Dead > 0 || h.Retrying > 0:
		return EndpointFailing
	}
	return EndpointEnabled
}

// Label is the state as shown to people, the same words everywhere: "enabled", "failing: 2
// dead letters, 1 retrying", "failing for 1h12m: answered 503 (1 retrying)" once alerted,
// "disabled: answered 410 Gone".
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
		if h.Alert == nil {
			return EndpointFailing + ": " + strings.Join(parts, ", ")
		}
		l := EndpointFailing + " for " + FailingFor(h.At.Sub(h.Alert.Since)) + ": " + h.AlertError()
		if len(parts) > 0 {
			l += " (" + strings.Join(parts, ", ") + ")"
		}
		return l
	}
	return EndpointEnabled
}

// AlertError is the last error of an alerted endpoint: its newest failed delivery's, when
// newer than the alert, else the alert's; empty when it is not alerted.
func (h EndpointHealth) AlertError() string {
	switch {
	case h.Alert == nil:
		return ""
	case !h.LastAt.After(h.Alert.AlertedAt):
		return h.Alert.Error
	case h.LastError != "":
		return h.LastError
	case h.LastStatus != 0:
		return fmt.Sprintf("answered %d", h.LastStatus)
	}
	return h.Alert.Error
}

// FailingFor writes how long an endpoint has been failing, to the minute ("1h12m", "45m",
// "2h"; under a minute to the second).
func FailingFor(d time.Duration) string {
	if d < time.Minute {
		return max(d, 0).Truncate(time.Second).String()
	}
	s := strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
