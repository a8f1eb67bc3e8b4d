package status

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// recentAttempts is how many of an endpoint's latest attempts its row shows.
const recentAttempts = 10

// attemptRow is one recent attempt of an endpoint.
type attemptRow struct {
	bridge.EndpointAttempt
}

// Failed says the attempt got no 2xx answer (an attempt the endpoint's filter dropped made no
// request and did not fail).
func (a attemptRow) Failed() bool {
	return (a.Status < 200 || a.Status > 299) && a.Error != relay.FilteredNote
}

// endpointView is one endpoint's card: where it delivers, its state (the same label as the
// overview and bridge endpoints list), its last error and its latest attempts, whatever state
// their deliveries are in.
type endpointView struct {
	Endpoint
	// Health is the endpoint's state: Health.State() and Health.Label().
	Health endpointHealth
	// Configured is false for an endpoint the store knows but the configuration no longer has.
	Configured bool
	Attempts   []attemptRow
	// LastError is the newest failed attempt's answer and error, or the newest error of its
	// dead or retrying deliveries; LastErrorAt when it was.
	LastError   string
	LastErrorAt time.Time
}

// endpoints is GET /endpoints: each configured endpoint with its state, a pause or resume
// button, its last error and its latest attempts.
func (p *Page) endpoints(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	health, err := p.health(ctx)
	if err != nil {
		return err
	}
	var out []endpointView
	for _, e := range p.o.Endpoints {
		out = append(out, endpointView{Endpoint: e, Configured: true})
	}
	for name, h := range health {
		if h.Disabled != "" && !slices.Contains(p.endpointNames(), name) {
			out = append(out, endpointView{Endpoint: Endpoint{Name: name}})
		}
	}
	for i := range out {
		v := &out[i]
		if h := health[v.Name]; h != nil {
			v.Health = *h
		}
		v.Health.Name = v.Name
		if v.Attempts, err = p.recent(ctx, v.Name); err != nil {
			return err
		}
		v.LastError, v.LastErrorAt = lastError(v.Attempts, v.Health)
	}
	return p.render(w, r, s, http.StatusOK, "endpoints.html", "Endpoints", out)
}

// lastError is the newest failed attempt among attempts (newest first), or else h's last
// error: "410 answered 410 Gone", with when it was.
func lastError(attempts []attemptRow, h endpointHealth) (string, time.Time) {
	for _, a := range attempts {
		if a.Failed() {
			return answer(a.Status, cmp.Or(a.Error, a.Response)), a.At
		}
	}
	if h.LastError != "" || h.LastStatus != 0 {
		return answer(h.LastStatus, h.LastError), h.LastAt
	}
	return "", time.Time{}
}

// answer writes a status and an error as one line: "410: gone", "no answer: dial tcp ...".
func answer(status int, text string) string {
	head := "no answer"
	if status != 0 {
		head = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	if text == "" {
		return head
	}
	return head + ": " + text
}

// recent returns the latest attempts of endpoint, newest first, whatever the state of their
// deliveries (the store's EndpointAttempts), redacted.
func (p *Page) recent(ctx context.Context, endpoint string) ([]attemptRow, error) {
	attempts, err := p.o.Store.EndpointAttempts(ctx, endpoint, recentAttempts)
	if err != nil {
		return nil, err
	}
	out := make([]attemptRow, len(attempts))
	for i, a := range attempts {
		a.Error, a.Response = api.Redact(a.Error), api.Redact(a.Response)
		out[i] = attemptRow{a}
	}
	return out, nil
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
