package status

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// maxListed bounds the rows of a list; the page says how many there were in all.
const maxListed = 200

// jobsView is the jobs list: the filters, and the newest matching jobs.
type jobsView struct {
	State, Source, Query string
	States, Sources      []string
	Jobs                 []bridge.Job
	Total                int
}

// jobs is GET /jobs?state=&source=&q=: the jobs in a state and of a source, newest first,
// found by a part of their file name, item, external id, author or owner, or of their job or
// transcription id, any case (the store's JobFilter.Query).
func (p *Page) jobs(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := jobsView{State: q.Get("state"), Source: q.Get("source"), Query: strings.TrimSpace(q.Get("q")), States: stateNames(), Sources: p.o.Sources}
	f := bridge.JobFilter{Source: v.Source, Query: v.Query}
	if v.State != "" {
		if !bridge.State(v.State).Valid() {
			return refuse(http.StatusBadRequest, "state %q: want one of %s", v.State, strings.Join(v.States, ", "))
		}
		f.States = []bridge.State{bridge.State(v.State)}
	}
	all, err := p.o.Store.Jobs(r.Context(), f)
	if err != nil {
		return err
	}
	slices.Reverse(all) // newest first
	v.Total = len(all)
	v.Jobs = all[:min(len(all), maxListed)]
	return p.render(w, r, s, http.StatusOK, "jobs.html", "Jobs", v)
}

// event is one line of a job's timeline.
type event struct {
	At time.Time
	// Kind is state, upload, delivery or attempt.
	Kind   string
	Title  string
	Detail string
	// Link points to the delivery of a delivery or attempt line.
	Link string
	// Bad marks a failure (a refused attempt, a dead letter, a move to held, skipped or failed).
	Bad bool
}

// jobView is a job's page: its fields, its timeline and, when held, the release forms.
type jobView struct {
	Job      *bridge.Job
	Timeline []event
	Picker   picker
}

// maxDeliveriesShown bounds the deliveries whose attempts a job's timeline shows.
const maxDeliveriesShown = 20

// job is GET /jobs/{id}: the job and its timeline, oldest first: every state change (upload
// attempts marked), every delivery of its events and each delivery's attempts.
func (p *Page) job(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	j, err := p.o.Store.Job(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	v := jobView{Job: j}
	history, err := p.o.Store.History(ctx, j.ID)
	if err != nil {
		return err
	}
	for _, c := range history {
		e := event{At: c.At, Kind: "state", Title: string(c.From) + " → " + string(c.To), Detail: api.Redact(c.Reason)}
		if c.From == "" {
			e.Title = "found: " + string(c.To)
		}
		if c.To == bridge.StateUploading {
			e.Kind = "upload"
		}
		e.Bad = c.To == bridge.StateHeld || c.To == bridge.StateFailed || c.To == bridge.StateSkipped || c.To == bridge.StateResubmit
		v.Timeline = append(v.Timeline, e)
	}
	// Deliveries are created after their job: those since it was found, of this job.
	ds, err := p.o.Store.Deliveries(ctx, bridge.DeliveryFilter{Since: j.CreatedAt, Limit: 5000})
	if err != nil {
		return err
	}
	shown := 0
	for _, d := range slices.Backward(ds) { // oldest first
		if d.JobID != j.ID || shown == maxDeliveriesShown {
			continue
		}
		shown++
		link := "/deliveries/" + d.ID
		v.Timeline = append(v.Timeline, event{At: d.CreatedAt, Kind: "delivery", Title: d.Type + " to " + d.Endpoint,
			Detail: "delivery " + d.ID + ": " + string(d.Status), Link: link, Bad: d.Status == bridge.DeliveryDead})
		_, attempts, err := p.o.Store.Delivery(ctx, d.ID)
		if err != nil {
			return err
		}
		for _, a := range attempts {
			v.Timeline = append(v.Timeline, attemptEvent(d, a, link))
		}
	}
	slices.SortStableFunc(v.Timeline, func(a, b event) int { return a.At.Compare(b.At) })
	if j.State == bridge.StateHeld {
		v.Picker = p.picker(r)
	}
	return p.render(w, r, s, http.StatusOK, "job.html", cmp.Or(j.Name, j.ItemID)+" (job "+j.ID+")", v)
}

// attemptEvent is one attempt of delivery d on a timeline.
func attemptEvent(d bridge.Delivery, a bridge.Attempt, link string) event {
	title := d.Endpoint + " answered " + http.StatusText(a.Status)
	if a.Status == 0 {
		title = d.Endpoint + ": no answer"
	}
	detail := api.Redact(a.Error)
	if detail == "" {
		detail = api.Redact(a.Response)
	}
	return event{At: a.At, Kind: "attempt", Title: title + " (" + strconv.Itoa(a.Status) + ")", Detail: detail, Link: link,
		Bad: a.Status < 200 || a.Status > 299}
}
