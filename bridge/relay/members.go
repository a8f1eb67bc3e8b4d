package relay

import (
	"context"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// relayLease prefixes the lease each running relay renews under its replica's name: the live
// ones are the replicas that share the endpoints' rate limits.
const relayLease = "relay:"

// keepEvery is how often a running relay renews its lease, counts the live replicas (sharing
// the rate limits anew) and checks the endpoints' failing spells (Alert). Its lease lasts three
// times as long: a replica that died stops counting within half a minute.
const keepEvery = 10 * time.Second

// keep runs the periodic work of Run until ctx ends, then gives the relay's lease up.
func (r *Relay) keep(ctx context.Context) {
	t := time.NewTicker(keepEvery)
	defer t.Stop()
	for {
		r.shareQuotas(ctx)
		if _, err := r.Alert(ctx); err != nil && ctx.Err() == nil {
			r.Log.Error("relay: endpoint alerts", "error", err)
		}
		select {
		case <-ctx.Done():
			if ls, ok := r.Store.(bridge.LeaseStore); ok && r.hasQuotas() {
				_ = ls.Release(context.WithoutCancel(ctx), relayLease+r.Replica, r.Replica) // else it runs out
			}
			return
		case <-t.C:
		}
	}
}

func (r *Relay) hasQuotas() bool {
	for _, e := range r.Endpoints {
		if e.quota != nil {
			return true
		}
	}
	return false
}

// shareQuotas renews this relay's lease and gives each rate-limited endpoint's quota its share:
// the configured rate and burst divided by the live relays (leases not run out). With a store
// that keeps no leases, or when it fails, each replica keeps its last share (at first, the whole
// quota).
func (r *Relay) shareQuotas(ctx context.Context) {
	ls, ok := r.Store.(bridge.LeaseStore)
	if !ok || !r.hasQuotas() {
		return
	}
	now := r.now()
	if _, err := ls.Lease(ctx, relayLease+r.Replica, r.Replica, now, 3*keepEvery); err != nil {
		r.Log.Error("relay: lease", "error", err)
		return
	}
	leases, err := ls.Leases(ctx)
	if err != nil {
		r.Log.Error("relay: leases", "error", err)
		return
	}
	n := LiveRelays(leases, now)
	for _, e := range r.Endpoints {
		if e.quota != nil {
			e.quota.share(n)
		}
	}
}

// LiveRelays counts the running relays among leases at now (at least one: this one).
func LiveRelays(leases []bridge.Lease, now time.Time) int {
	n := 0
	for _, l := range leases {
		if strings.HasPrefix(l.Name, relayLease) && l.Until.After(now) {
			n++
		}
	}
	return max(n, 1)
}
