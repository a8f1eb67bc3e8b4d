package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// deliveriesView is the deliveries list (the dead-letter queue with status dead) and the bulk
// replay form.
type deliveriesView struct {
	Endpoint, Status string
	Endpoints        []string
	Statuses         []string
	Deliveries       []bridge.Delivery
	// Names are the file names of the deliveries' jobs, by job id.
	Names map[string]string
	// Since is the bulk replay form's default start: a day ago, as datetime-local takes it.
	Since string
}

// deliveries is GET /deliveries?endpoint=&status=: the newest deliveries; status=dead is the
// dead-letter queue.
func (p *Page) deliveries(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := deliveriesView{Endpoint: q.Get("endpoint"), Status: q.Get("status"), Endpoints: p.endpointNames(),
		Since: p.now().Add(-24 * time.Hour).Format(localMinute)}
	for _, st := range bridge.DeliveryStatuses {
		v.Statuses = append(v.Statuses, string(st))
	}
	if v.Status != "" && !slices.Contains(v.Statuses, v.Status) {
		return refuse(http.StatusBadRequest, "status %q: want one of %s", v.Status, strings.Join(v.Statuses, ", "))
	}
	ds, err := p.o.Store.Deliveries(r.Context(), bridge.DeliveryFilter{Endpoint: v.Endpoint, Status: bridge.DeliveryStatus(v.Status), Limit: maxListed})
	if err != nil {
		return err
	}
	v.Deliveries = ds
	if v.Names, err = p.jobNames(r.Context(), ds); err != nil {
		return err
	}
	return p.render(w, r, s, http.StatusOK, "deliveries.html", "Deliveries", v)
}

// jobNames returns the file names of the jobs of ds, by job id (a job no longer stored is
// left out).
func (p *Page) jobNames(ctx context.Context, ds []bridge.Delivery) (map[string]string, error) {
	names := map[string]string{}
	for _, d := range ds {
		if _, seen := names[d.JobID]; seen || d.JobID == "" {
			continue
		}
		j, err := p.o.Store.Job(ctx, d.JobID)
		if errors.Is(err, bridge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		names[d.JobID] = cmp.Or(j.Name, j.ItemID)
	}
	return names, nil
}

// deliveryView is one delivery's page.
type deliveryView struct {
	Delivery *bridge.Delivery
	Attempts []bridge.Attempt
	// Data is the event's data as stored, secrets redacted.
	Data string
	// JobName is the file name of the delivery's job ("" when it has none, or it is gone).
	JobName string
}

// delivery is GET /deliveries/{id}: the delivery, its event's data and every attempt.
func (p *Page) delivery(w http.ResponseWriter, r *http.Request, s *session) error {
	d, attempts, err := p.o.Store.Delivery(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	for i := range attempts {
		attempts[i].Response, attempts[i].Error = api.Redact(attempts[i].Response), api.Redact(attempts[i].Error)
	}
	d.LastError = api.Redact(d.LastError)
	v := deliveryView{Delivery: d, Attempts: attempts, Data: api.Redact(string(d.Data))}
	names, err := p.jobNames(r.Context(), []bridge.Delivery{*d})
	if err != nil {
		return err
	}
	v.JobName = names[d.JobID]
	return p.render(w, r, s, http.StatusOK, "delivery.html", "Delivery "+d.ID, v)
}

// replayOne is POST /deliveries/{id}/replay: relay.Replay of that delivery, as bridge
// deliveries replay ID does.
func (p *Page) replayOne(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	return p.act(w, r, s, "replay", []string{id}, "", "/deliveries?status=dead", func(ctx context.Context) (string, error) {
		n, err := relay.Replay(ctx, p.o.Store, []string{id}, bridge.DeliveryFilter{}, p.now())
		if err == nil && n == 0 {
			err = fmt.Errorf("delivery %s: %w", id, bridge.ErrDeliveryNotFound)
		}
		return fmt.Sprintf("delivery %s%s will be sent again (same webhook-id)", id, p.deliveryOf(ctx, id)), err
	})
}

// deliveryOf says what delivery id is, for a banner: " (recording.held of "call.wav" to
// crm)", or "" when it cannot be read.
func (p *Page) deliveryOf(ctx context.Context, id string) string {
	d, _, err := p.o.Store.Delivery(ctx, id)
	if err != nil {
		return ""
	}
	what := d.Type
	if j, err := p.o.Store.Job(ctx, d.JobID); err == nil && d.JobID != "" {
		what += fmt.Sprintf(" of %q", cmp.Or(j.Name, j.ItemID))
	}
	return " (" + what + " to " + d.Endpoint + ")"
}

// maxAuditedIDs bounds the delivery ids a bulk replay lists in the audit log; past it, the
// replay goes by its filter and the log names the endpoint.
const maxAuditedIDs = 1000

// localMinute is how a datetime-local field writes a time.
const localMinute = "2006-01-02T15:04"

// replayMany is POST /deliveries/replay: relay.Replay of an endpoint's deliveries created since
// a time (UTC), only the dead letters unless dead is off, as bridge deliveries replay
// --endpoint E --since T [--dead] does. The audit log lists the ids it matched.
func (p *Page) replayMany(w http.ResponseWriter, r *http.Request, s *session) error {
	endpoint, since := r.PostFormValue("endpoint"), strings.TrimSpace(r.PostFormValue("since"))
	f := bridge.DeliveryFilter{Endpoint: endpoint}
	if r.PostFormValue("dead") != "" {
		f.Status = bridge.DeliveryDead
	}
	detail := fmt.Sprintf("endpoint %s since %s", endpoint, since)
	if f.Status != "" {
		detail += ", dead letters only"
	}
	targets := []string{}
	var matched []bridge.Delivery
	t, perr := parseSince(since)
	if perr == nil && endpoint == "" {
		perr = errors.New("name the endpoint whose deliveries to replay")
	}
	if perr == nil {
		f.Since = t
		lf := f
		lf.Limit = maxAuditedIDs + 1
		var err error
		if matched, err = p.o.Store.Deliveries(r.Context(), lf); err != nil {
			return err
		}
		for _, d := range matched {
			targets = append(targets, d.ID)
		}
		if len(matched) > maxAuditedIDs {
			targets, detail = []string{"endpoint " + endpoint}, detail+fmt.Sprintf(" (more than %d deliveries)", maxAuditedIDs)
		}
	}
	return p.act(w, r, s, "replay", targets, detail, "/deliveries?endpoint="+url.QueryEscape(endpoint), func(ctx context.Context) (string, error) {
		if perr != nil {
			return "", perr
		}
		if len(matched) == 0 {
			return "no delivery matches: nothing to replay", nil
		}
		var ids []string
		if len(matched) <= maxAuditedIDs {
			ids = targets
		}
		n, err := relay.Replay(ctx, p.o.Store, ids, f, p.now())
		return strconv.Itoa(n) + " deliveries to " + endpoint + " will be sent again", err
	})
}

// parseSince reads a start time: datetime-local (to the minute or second) or RFC 3339, UTC
// unless it says otherwise. It fails naming the value.
func parseSince(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, localMinute, "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("since %q: want a time like 2026-11-22T00:00 (UTC) or RFC 3339", v)
}

// endpointNames are the configured endpoints' names.
func (p *Page) endpointNames() []string {
	out := make([]string, 0, len(p.o.Endpoints))
	for _, e := range p.o.Endpoints {
		out = append(out, e.Name)
	}
	return out
}
