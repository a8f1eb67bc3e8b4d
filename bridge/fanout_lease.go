package bridge

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// FanOutOrder is what a store knows, inside a batch's transaction, of the order that new
// deliveries must keep (LeaseFanOuts): read after the batch's events are marked fanned out and
// before their deliveries are written.
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

// LeaseFanOuts picks, among a batch's new deliveries (rows: not yet written; each with its
// event, endpoint, job and ids set), those its claims take at once, as ClaimItem says: per
// endpoint in event order, up to each claim's Limit (less what it holds), where Claim would
// take them. A picked row gets LeaseUntil (now and its claim's Lease) and NextAttemptAt the
// same (due again only if the lease runs out); the store writes it so. It returns the picked
// rows' indices in event order: once they are written, AddLeased hands them to their claims.
func LeaseFanOuts(rows []Delivery, claims []ClaimItem, o FanOutOrder, now time.Time) []int {
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

// AddLeased appends to their claims' Claimed the picked rows (LeaseFanOuts) that the store
// wrote (their ids in written): a row not written is an existing delivery of the same event
// and endpoint (a message handed out again), left as it is.
func AddLeased(claims []ClaimItem, rows []Delivery, picked []int, written map[string]bool) {
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

// NewDeliveries returns the deliveries of items' events to their endpoints, not yet written:
// each with a fresh id (UUIDv7, so index entries land together) and webhook-id, and its event's
// fields from events (by event id: what the store's outbox returned, pending, due now). An item
// whose event events lacks gets ErrUnknownEvent (its Err) and no delivery. It fails only when
// the system's random source does.
func NewDeliveries(items []FanOutItem, events map[int64]Delivery) ([]Delivery, error) {
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
			rows = append(rows, d)
		}
	}
	return rows, nil
}
