package status

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// stateCount is how many jobs are in one state.
type stateCount struct {
	State string
	N     int
}

// sourceView is one configured source on the overview: its jobs, and the last recording it
// found (its newest job).
type sourceView struct {
	Name     string
	Jobs     int
	Last     time.Time
	LastItem string
	// Down is true while the source's scans fail (Options.SourceHealth), since DownSince,
	// with Error the last failure and Failures the failed scans.
	Down      bool
	DownSince time.Time
	Error     string
	Failures  int
}

// endpointHealth is an endpoint's state (bridge.EndpointHealth: its State and Label, its last
// error) with its name.
type endpointHealth struct {
	bridge.EndpointHealth
	Name string
}

// overviewView is the overview's data.
type overviewView struct {
	Counts       []stateCount
	Total, Held  int
	Sources      []sourceView
	SourcesAt    time.Time
	SourcesErr   string
	Workspace    *api.Workspace
	WorkspaceAt  time.Time
	WorkspaceErr string
	RateLimit    string
	PerMinute    float64
	Failing      []endpointHealth
	// Alerts are the endpoints failing for their alert_after (endpoint.failing was sent).
	Alerts          []bridge.EndpointAlert
	LastExport      *bridge.ExportRun
	LastExportState string
	LastExportAgo   string
}

// rateWindow is how far back deliveries per minute are counted.
const rateWindow = 5 * time.Minute

// overview is GET /: counts by state, last discovery per source, the API's balance and limits
// (cached), deliveries per minute, failing endpoints and the last export run.
func (p *Page) overview(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, now := r.Context(), p.now()
	v := overviewView{RateLimit: p.o.RateLimit}
	counts, err := p.o.Store.Counts(ctx)
	if err != nil {
		return err
	}
	for _, st := range bridge.States {
		v.Counts = append(v.Counts, stateCount{string(st), counts[st]})
		v.Total += counts[st]
	}
	v.Held = counts[bridge.StateHeld]
	if v.Sources, v.SourcesAt, err = p.sources.get(ctx, now); err != nil {
		v.SourcesErr = err.Error()
	}
	v.Sources = p.withHealth(v.Sources)
	if p.o.API != nil {
		if v.Workspace, v.WorkspaceAt, err = p.workspace.get(ctx, now); err != nil {
			v.WorkspaceErr = api.Redact(err.Error())
		}
	}
	if v.PerMinute, err = p.deliveredPerMinute(ctx, now); err != nil {
		return err
	}
	if v.Failing, err = p.failing(ctx); err != nil {
		return err
	}
	if v.Alerts, err = p.o.Store.FailingEndpoints(ctx); err != nil {
		return err
	}
	for i := range v.Alerts {
		v.Alerts[i].Error = api.Redact(v.Alerts[i].Error)
	}
	runs, err := p.o.Store.Runs(ctx, "", 1)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		v.LastExport, v.LastExportState = &runs[0], string(runs[0].State(now))
		v.LastExportAgo = ago(now, runs[0].StartedAt)
	}
	return p.render(w, r, s, http.StatusOK, "overview.html", "Overview", v)
}

// lastDiscoveries returns each configured source's job count and newest job (the store keeps
// no scan times apart from its cursors, which it does not show): it reads every job of the
// source, so the page caches it.
func (p *Page) lastDiscoveries(ctx context.Context) ([]sourceView, error) {
	var out []sourceView
	for _, name := range p.o.Sources {
		jobs, err := p.o.Store.Jobs(ctx, bridge.JobFilter{Source: name})
		if err != nil {
			return nil, err
		}
		v := sourceView{Name: name, Jobs: len(jobs)}
		if len(jobs) > 0 {
			last := jobs[len(jobs)-1] // oldest first
			v.Last, v.LastItem = last.CreatedAt, last.ItemID
		}
		out = append(out, v)
	}
	return out, nil
}

// withHealth is sources (cached) with what the scans say now of each (Options.SourceHealth): a
// source that cannot be read is marked down, with its error and since when. The list is a
// copy: the cache's is left alone.
func (p *Page) withHealth(sources []sourceView) []sourceView {
	if p.o.SourceHealth == nil {
		return sources
	}
	out := slices.Clone(sources)
	for _, h := range p.o.SourceHealth() {
		if h.Up {
			continue
		}
		i := slices.IndexFunc(out, func(v sourceView) bool { return v.Name == h.Source })
		if i < 0 {
			out, i = append(out, sourceView{Name: h.Source}), len(out)
		}
		out[i].Down, out[i].DownSince, out[i].Error, out[i].Failures = true, h.Since, api.Redact(h.Error), h.Failures
	}
	return out
}

// deliveredPerMinute counts the deliveries of the last hour that were delivered within the
// last rateWindow, per minute.
func (p *Page) deliveredPerMinute(ctx context.Context, now time.Time) (float64, error) {
	ds, err := p.o.Store.Deliveries(ctx, bridge.DeliveryFilter{Status: bridge.DeliveryDelivered, Since: now.Add(-time.Hour), Limit: 10000})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range ds {
		if !d.UpdatedAt.Before(now.Add(-rateWindow)) {
			n++
		}
	}
	return float64(n) / rateWindow.Minutes(), nil
}

// failing returns the endpoints that are disabled, hold dead letters or are retrying, by name.
func (p *Page) failing(ctx context.Context) ([]endpointHealth, error) {
	byName, err := p.health(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]endpointHealth, 0, len(byName))
	for _, e := range byName {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b endpointHealth) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// health returns, by name, the endpoints that are disabled, hold dead letters or are retrying
// (bridge.EndpointsHealth), their errors redacted; an endpoint missing from it is enabled with
// nothing failing.
func (p *Page) health(ctx context.Context) (map[string]*endpointHealth, error) {
	all, err := bridge.EndpointsHealth(ctx, p.o.Store)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*endpointHealth, len(all))
	for name, h := range all {
		h.LastError = api.Redact(h.LastError)
		out[name] = &endpointHealth{EndpointHealth: *h, Name: name}
	}
	return out, nil
}
