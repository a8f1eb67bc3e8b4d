package bridge

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// FanOutTx is a store's share of FanOutAll, run inside its transaction: the SQL, where
// FanOutAll holds the steps and their order (per-job order depends on it).
type FanOutTx interface {
	// MarkFanned marks the events ids handed on and returns those the outbox has, by id, with
	// their event's fields set (EventID, Type, JobID, TranscriptionID, Data, EventAt). It fails
	// as the store does.
	MarkFanned(ctx context.Context, ids []int64, now time.Time) (map[int64]Delivery, error)
	// FanOutOrder reads what leasing needs of jobs (after MarkFanned, before InsertDeliveries):
	// their first events still to fan out, their first pending deliveries per endpoint, and the
	// paused endpoints. It fails as the store does.
	FanOutOrder(ctx context.Context, jobs []string) (FanOutOrder, error)
	// InsertDeliveries writes rows (a leased one with LeaseUntil, due only when it ends) and
	// returns the ids it wrote: a delivery of the same event and endpoint that already exists
	// is kept as it is. It fails as the store does.
	InsertDeliveries(ctx context.Context, rows []Delivery, now time.Time) (map[string]bool, error)
}

// FanOutAll is the fan-out of DeliveryStore.Commit, inside the store's transaction tx: it marks
// items' events handed on (ErrUnknownEvent in the Err of an item whose event the outbox lacks),
// creates one delivery per event and endpoint with a fresh webhook-id (a delivery that already
// exists keeps its own: retries and replays reuse it), and leases the new deliveries claims
// can take at once into their Claimed, as ClaimItem says. The order is read after the events
// are marked and before their deliveries are written, and only when a claim has room for one
// of them. It fails as tx does, or when the system's random source does.
func FanOutAll(ctx context.Context, tx FanOutTx, items []FanOutItem, now time.Time, claims []ClaimItem) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]int64, len(items))
	for i := range items {
		items[i].Err = nil
		ids[i] = items[i].Ref.EventID
	}
	events, err := tx.MarkFanned(ctx, ids, now)
	if err != nil {
		return fmt.Errorf("fan out %d events: %w", len(items), err)
	}
	rows, err := newDeliveries(items, events, now)
	if err != nil || len(rows) == 0 {
		return err
	}
	var picked []int
	if jobs := leasable(rows, claims); len(jobs) > 0 {
		order, err := tx.FanOutOrder(ctx, jobs)
		if err != nil {
			return fmt.Errorf("fan out %d events: %w", len(items), err)
		}
		picked = leaseFanOuts(rows, claims, order, now)
	}
	written, err := tx.InsertDeliveries(ctx, rows, now)
	if err != nil {
		return fmt.Errorf("fan out %d events: %w", len(items), err)
	}
	addLeased(claims, rows, picked, written)
	return nil
}

// leasable returns the jobs of the rows whose endpoint has a claim with room, each once.
func leasable(rows []Delivery, claims []ClaimItem) []string {
	room := map[string]bool{}
	for _, c := range claims {
		room[c.Endpoint] = room[c.Endpoint] || c.Limit > len(c.Claimed)
	}
	var jobs []string
	seen := map[string]bool{}
	for _, d := range rows {
		if room[d.Endpoint] && !seen[d.JobID] {
			seen[d.JobID] = true
			jobs = append(jobs, d.JobID)
		}
	}
	return jobs
}

// FanOutOrder is what a store knows, inside a batch's transaction, of the order that new
// deliveries must keep (FanOutTx.FanOutOrder): read after the batch's events are marked fanned
// out and before their deliveries are written.
type FanOutOrder struct {
	// Unfanned is, per job, the first event of the job still to fan out (none: absent).
	Unfanned map[string]int64
	// Pending is, per job and endpoint, the first event of the job with a delivery pending at
	// the endpoint (none: absent).
	Pending map[JobEndpoint]int64
	// Paused holds the endpoints switched off (EndpointState): nothing of theirs is leased.
	Paused map[string]bool
}

// JobEndpoint keys FanOutOrder.Pending.
type JobEndpoint struct{ Job, Endpoint string }

// leaseFanOuts picks, among a batch's new deliveries (rows: not yet written; each with its
// event, endpoint, job and ids set), those its claims take at once, as ClaimItem says: per
// endpoint in event order, up to each claim's Limit (less what it holds), where Claim would
// take them. A picked row gets LeaseUntil (now and its claim's Lease) and NextAttemptAt the
// same (due again only if the lease runs out); the store writes it so. It returns the picked
// rows' indices in event order: once they are written, addLeased hands them to their claims.
func leaseFanOuts(rows []Delivery, claims []ClaimItem, o FanOutOrder, now time.Time) []int {
	room := map[string]*ClaimItem{}
	left := map[string]int{}
	for i := range claims {
		if c := &claims[i]; !o.Paused[c.Endpoint] && c.Limit > len(c.Claimed) {
			room[c.Endpoint], left[c.Endpoint] = c, c.Limit-len(c.Claimed)
		}
	}
	if len(room) == 0 {
		return nil
	}
	order := make([]int, 0, len(rows))
	for i := range rows {
		if room[rows[i].Endpoint] != nil {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rows[a].EventID, rows[b].EventID) })
	// blocked marks a job and endpoint whose next new delivery may not be leased: an earlier
	// one was not (no room, or it waits itself).
	blocked := map[JobEndpoint]bool{}
	var picked []int
	for _, i := range order {
		d := &rows[i]
		k := JobEndpoint{d.JobID, d.Endpoint}
		switch u, unfanned := o.Unfanned[d.JobID]; {
		case blocked[k]:
			continue
		case unfanned && u < d.EventID, pendingBefore(o, k, d.EventID), left[d.Endpoint] == 0:
			blocked[k] = true
			continue
		}
		left[d.Endpoint]--
		d.LeaseUntil = now.Add(room[d.Endpoint].Lease).UTC()
		d.NextAttemptAt = d.LeaseUntil
		picked = append(picked, i)
	}
	return picked
}

// pendingBefore says whether o has a delivery pending at k's endpoint for an event of k's job
// before event.
func pendingBefore(o FanOutOrder, k JobEndpoint, event int64) bool {
	p, ok := o.Pending[k]
	return ok && p < event
}

// addLeased appends to their claims' Claimed the picked rows (leaseFanOuts) that the store
// wrote (their ids in written): a row not written is an existing delivery of the same event
// and endpoint (a message handed out again), left as it is.
func addLeased(claims []ClaimItem, rows []Delivery, picked []int, written map[string]bool) {
	at := map[string]*ClaimItem{}
	for i := range claims {
		at[claims[i].Endpoint] = &claims[i]
	}
	for _, i := range picked {
		if d := rows[i]; written[d.ID] {
			c := at[d.Endpoint]
			c.Claimed = append(c.Claimed, d)
		}
	}
}

// newDeliveries returns the deliveries of items' events to their endpoints, not yet written:
// each with a fresh id (UUIDv7, so index entries land together) and webhook-id, its event's
// fields from events (by event id), pending and due at now. An item whose event events lacks
// gets ErrUnknownEvent (its Err) and no delivery. It fails only when the system's random source
// does.
func newDeliveries(items []FanOutItem, events map[int64]Delivery, now time.Time) ([]Delivery, error) {
	n := 0
	for _, f := range items {
		n += len(f.Endpoints)
	}
	rows := make([]Delivery, 0, n)
	for i := range items {
		f := &items[i]
		ev, ok := events[f.Ref.EventID]
		if !ok {
			f.Err = fmt.Errorf("fan out event %d: %w", f.Ref.EventID, ErrUnknownEvent)
			continue
		}
		for _, ep := range f.Endpoints {
			webhookID, err := NewWebhookID()
			if err != nil {
				return nil, fmt.Errorf("fan out event %d to %s: %w", f.Ref.EventID, ep, err)
			}
			id, err := uuid.NewV7()
			if err != nil {
				return nil, fmt.Errorf("fan out event %d to %s: %w", f.Ref.EventID, ep, err)
			}
			d := ev
			d.ID, d.Endpoint, d.WebhookID = id.String(), ep, webhookID
			d.Status, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = DeliveryPending, now.UTC(), now.UTC(), now.UTC()
			rows = append(rows, d)
		}
	}
	return rows, nil
}
