package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// RetainExports is the retention kind of local export archives (run folders), which the
// exporter's package purges (Purger.Archives).
const RetainExports = "exports"

// Default retention ages (retention: in the configuration).
const (
	DefaultRetainDeliveries  = 30 * 24 * time.Hour
	DefaultRetainDeadLetters = 90 * 24 * time.Hour
	DefaultRetainJobs        = 365 * 24 * time.Hour
	DefaultRetainExports     = 30 * 24 * time.Hour
)

// DefaultPurgeBatch is how many rows one purge transaction removes at most.
const DefaultPurgeBatch = 500

// retentionLease names the lease of the replica that purges.
const retentionLease = "retention"

// Archives purges local export archives past their retention: what package export does for
// Purger, which cannot import it.
type Archives struct {
	// Expired counts the archives past their retention at now, and the oldest one's time.
	Expired func(ctx context.Context, now time.Time) (int, time.Time, error)
	// Purge removes up to limit of them and returns how many it removed.
	Purge func(ctx context.Context, now time.Time, limit int) (int, error)
}

// PurgeMetrics counts what a purge removed (bridge_purged_total{kind}).
type PurgeMetrics interface {
	Purged(kind string, n int)
}

// Purger removes what the bridge keeps past its retention, in small batches, on one replica at
// a time (the lease "retention").
type Purger struct {
	Store interface {
		PrivacyStore
		LeaseStore
	}
	// Ages is each store kind's retention (RetentionKinds); a kind missing or 0 is kept for good.
	Ages map[string]time.Duration
	// Archives, when set, purges local export archives (kind RetainExports).
	Archives *Archives
	// Batch is how many rows a transaction removes at most (default DefaultPurgeBatch).
	Batch int
	// Replica and Lease are the lease's holder and duration (defaults DefaultReplica(),
	// DefaultLease).
	Replica string
	Lease   time.Duration
	Metrics PurgeMetrics
	Log     *slog.Logger
	Now     func() time.Time
}

func (p *Purger) setDefaults() {
	if p.Batch <= 0 {
		p.Batch = DefaultPurgeBatch
	}
	if p.Replica == "" {
		p.Replica = DefaultReplica()
	}
	if p.Lease <= 0 {
		p.Lease = DefaultLease
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
}

// Purge removes, kind by kind, everything past its age, a batch per transaction, renewing the
// lease between batches (a lease lost ends the purge: the other replica carries on). It returns
// what it removed by kind; nothing, when another replica holds the lease.
func (p *Purger) Purge(ctx context.Context) (map[string]int, error) {
	p.setDefaults()
	removed := map[string]int{}
	if ok, err := p.Store.Lease(ctx, retentionLease, p.Replica, p.Now(), p.Lease); err != nil || !ok {
		return removed, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		p.Store.Release(rctx, retentionLease, p.Replica)
	}()
	for _, kind := range slices.Concat(RetentionKinds, []string{RetainExports}) {
		for {
			n, err := p.batch(ctx, kind)
			removed[kind] += n
			if n > 0 {
				if p.Metrics != nil {
					p.Metrics.Purged(kind, n)
				}
			}
			if err != nil {
				return removed, err
			}
			if n < p.Batch {
				break
			}
			if ok, err := p.Store.Lease(ctx, retentionLease, p.Replica, p.Now(), p.Lease); err != nil || !ok {
				return removed, err
			}
		}
		if removed[kind] > 0 {
			p.Log.Info("retention purge", "kind", kind, "removed", removed[kind])
		}
	}
	return removed, nil
}

// batch removes one batch of kind.
func (p *Purger) batch(ctx context.Context, kind string) (int, error) {
	now := p.Now()
	if kind == RetainExports {
		if p.Archives == nil {
			return 0, nil
		}
		return p.Archives.Purge(ctx, now, p.Batch)
	}
	age := p.Ages[kind]
	if age <= 0 {
		return 0, nil
	}
	return p.Store.Purge(ctx, kind, now.Add(-age), p.Batch)
}

// Next is what the next purge would remove of one kind.
type Next struct {
	Kind string `json:"kind"`
	// Keep is the retention ("30d", "5 runs", "forever").
	Keep string `json:"keep"`
	// Count is how many rows (archives) are past it now; Oldest the oldest one's time.
	Count  int       `json:"count"`
	Oldest time.Time `json:"oldest,omitzero"`
}

// Show says, kind by kind, what the next purge would remove. keepExports describes the
// exports' retention.
func (p *Purger) Show(ctx context.Context, keepExports string) ([]Next, error) {
	p.setDefaults()
	now := p.Now()
	var out []Next
	for _, kind := range RetentionKinds {
		nx := Next{Kind: kind, Keep: "forever"}
		if age := p.Ages[kind]; age > 0 {
			nx.Keep = FormatAge(age)
			n, oldest, err := p.Store.Expired(ctx, kind, now.Add(-age))
			if err != nil {
				return nil, err
			}
			nx.Count, nx.Oldest = n, oldest
		}
		out = append(out, nx)
	}
	nx := Next{Kind: RetainExports, Keep: keepExports}
	if p.Archives != nil {
		n, oldest, err := p.Archives.Expired(ctx, now)
		if err != nil {
			return nil, err
		}
		nx.Count, nx.Oldest = n, oldest
	}
	return append(out, nx), nil
}

// FormatAge writes a retention age in years when it is whole years of 365 days ("1y"), in days
// when it is whole days ("30d"), else as a duration.
func FormatAge(d time.Duration) string {
	if year := 365 * 24 * time.Hour; d > 0 && d%year == 0 {
		return fmt.Sprintf("%dy", d/year)
	}
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
