package bridge

import (
	"context"
	"time"
)

// DeliveryBatch is the relay's group commit: claims given back, attempts to record, deliveries
// to claim and events to fan out, written in one transaction (DeliveryStore.Commit), in that
// order, so an attempt recorded frees the next delivery of its job for a claim of the same
// batch. Each item carries its own result; Commit's error is for the batch as a whole (nothing
// written).
type DeliveryBatch struct {
	// Now is the time of the batch: fan-outs' creation time, claims' "due by" and lease start.
	Now time.Time
	// Records are attempts with the deliveries' new state, as Record takes them.
	Records []RecordItem
	// FanOuts are events to fan out, as FanOut takes them.
	FanOuts []FanOutItem
	// Claims lease due deliveries, as Claim does, per endpoint.
	Claims []ClaimItem
	// Releases are claimed deliveries given back unattempted (a relay stopping with a queue,
	// the rest of a chain whose delivery failed): each one's lease ends at once, only while it
	// is still under the claim this copy holds (LeaseUntil), so another claim can take it
	// without waiting for the lease to run out. Written first, before the records.
	Releases []Delivery
}

// RecordItem is one attempt of DeliveryBatch.Records.
type RecordItem struct {
	// Delivery is the delivery with its new state; LeaseUntil fences it as in Record.
	Delivery *Delivery
	// Attempt is the try to record.
	Attempt Attempt
	// Err is set by Commit: ErrConflict (the delivery was claimed again: the attempt is kept,
	// the state is not) or ErrDeliveryNotFound.
	Err error
}

// FanOutItem is one event of DeliveryBatch.FanOuts.
type FanOutItem struct {
	// Ref is the event; Endpoints the endpoints that want it.
	Ref       EventRef
	Endpoints []string
	// Err is set by Commit: ErrUnknownEvent when the outbox has no such event.
	Err error
}

// ClaimItem is one endpoint's claim of DeliveryBatch.Claims.
//
// A claim first takes due deliveries as Claim does (older work first: the batch's own events
// count as not yet fanned out), then, in the room left, the deliveries the batch's own fan-outs
// create for its endpoint, leased as they are written (no second write, no search). A new
// delivery is leased at once only where Claim would take it: its endpoint not paused, no earlier
// event of its job still to fan out, no earlier delivery of its job pending at its endpoint,
// except earlier ones leased with it (a store may lease less: SQLite looks 200 events at a
// time). Several deliveries of one job in Claimed are therefore a chain, in event order: each
// is to be sent once the one before it was delivered (its answer received, its record perhaps
// not yet committed: a crash then may send both again, in order), and the rest given back
// (Releases) if it was not.
type ClaimItem struct {
	// Endpoint is whose deliveries to claim; Limit at most how many; Lease for how long.
	Endpoint string
	Limit    int
	Lease    time.Duration
	// FanOutsOnly takes only the deliveries the batch's fan-outs create: no search for older
	// due ones (a lane with room for new work and no backlog to look for).
	FanOutsOnly bool
	// Claimed is set by Commit: the deliveries leased, with LeaseUntil set; those of one job in
	// event order.
	Claimed []Delivery
}

// BatchCommitter is the group commit the relay's engine uses (DeliveryStore.Commit).
type BatchCommitter interface {
	// Commit writes b in one transaction and fills in each item's result. It fails, with
	// nothing written, when the transaction does (the store down or busy past its timeout).
	Commit(ctx context.Context, b *DeliveryBatch) error
}
