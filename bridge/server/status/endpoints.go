package status

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// recentAttempts is how many of an endpoint's latest attempts its row shows.
const recentAttempts = 10

// attemptRow is one recent attempt of an endpoint.
type attemptRow struct {
	bridge.Attempt
	DeliveryID, Type string
}

// endpointView is one endpoint's row: where it delivers, whether it is paused, and its latest
// attempts.
type endpointView struct {
	Endpoint
	// Disabled is why the endpoint is off (paused here, or after a 410); empty when on.
	Disabled string
	// Configured is false for an endpoint the store knows but the configuration no longer has.
	Configured bool
	Attempts   []attemptRow
}

// endpoints is GET /endpoints: each configured endpoint with its state, a pause or resume
// button and its latest attempts.
func (p *Page) endpoints(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	disabled, err := p.o.Store.DisabledEndpoints(ctx)
	if err != nil {
		return err
	}
	var out []endpointView
	for _, e := range p.o.Endpoints {
		out = append(out, endpointView{Endpoint: e, Disabled: disabled[e.Name], Configured: true})
	}
	for name, reason := range disabled {
		if !slices.Contains(p.endpointNames(), name) {
			out = append(out, endpointView{Endpoint: Endpoint{Name: name}, Disabled: reason})
		}
	}
	for i := range out {
		if out[i].Attempts, err = p.recent(ctx, out[i].Name); err != nil {
			return err
		}
	}
	return p.render(w, r, s, http.StatusOK, "endpoints.html", "Endpoints", out)
}

// recent returns the latest attempts of endpoint, newest first, from its latest deliveries.
func (p *Page) recent(ctx context.Context, endpoint string) ([]attemptRow, error) {
	ds, err := p.o.Store.Deliveries(ctx, bridge.DeliveryFilter{Endpoint: endpoint, Limit: recentAttempts})
	if err != nil {
		return nil, err
	}
	var out []attemptRow
	for _, d := range ds { // a replayed delivery counts its attempts from 0 again, but keeps them
		_, attempts, err := p.o.Store.Delivery(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range attempts {
			a.Error, a.Response = api.Redact(a.Error), api.Redact(a.Response)
			out = append(out, attemptRow{Attempt: a, DeliveryID: d.ID, Type: d.Type})
		}
	}
	slices.SortFunc(out, func(a, b attemptRow) int { return b.At.Compare(a.At) })
	return out[:min(len(out), recentAttempts)], nil
}

// pause is POST /endpoints/{name}/pause: the store's DisableEndpoint, with the reason "paused
// from the status page by <who>": its deliveries wait until it is resumed.
func (p *Page) pause(w http.ResponseWriter, r *http.Request, s *session) error {
	name := r.PathValue("name")
	reason := "paused from the status page by " + p.who(r, s)
	return p.act(w, r, s, "pause", []string{name}, reason, "/endpoints", func(ctx context.Context) (string, error) {
		if !slices.Contains(p.endpointNames(), name) {
			return "", fmt.Errorf("endpoint %q is not configured (configured: %s)", name, strings.Join(p.endpointNames(), ", "))
		}
		return "endpoint " + name + " paused: its deliveries wait", p.o.Store.DisableEndpoint(ctx, name, reason, p.now())
	})
}

// resume is POST /endpoints/{name}/resume: the store's EnableEndpoint (as bridge endpoints
// enable does), also for an endpoint disabled after a 410.
func (p *Page) resume(w http.ResponseWriter, r *http.Request, s *session) error {
	name := r.PathValue("name")
	return p.act(w, r, s, "resume", []string{name}, "", "/endpoints", func(ctx context.Context) (string, error) {
		return "endpoint " + name + " resumed: its pending deliveries go out", p.o.Store.EnableEndpoint(ctx, name)
	})
}
