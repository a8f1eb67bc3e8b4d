package relay

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestReplicasShareTheRateLimit: each live relay on one store takes the rate and burst divided
// by the live relays; one that stops gives its share back.
func TestReplicasShareTheRateLimit(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	var relays []*Relay
	for _, name := range []string{"r1", "r2", "r3"} {
		ep := endpoint(t, EndpointConfig{Name: "crm", URL: "https://x.test/h", Secrets: []webhook.Secret{secret(t)}, RateLimit: "100/10s"})
		r := &Relay{Store: store, Endpoints: []*Endpoint{ep}, Replica: name, Now: func() time.Time { return now }}
		r.init()
		relays = append(relays, r)
	}
	share := func(r *Relay) (rate.Limit, int) {
		return r.Endpoints[0].quota.lim.Limit(), r.Endpoints[0].quota.lim.Burst()
	}
	if l, b := share(relays[0]); l != 10 || b != 100 {
		t.Errorf("alone: %v/s, burst %d; want 10/s, burst 100", l, b)
	}
	for _, r := range relays {
		r.shareQuotas(ctx)
	}
	relays[0].shareQuotas(ctx)
	if l, b := share(relays[0]); l < 3.33 || l > 3.34 || b != 33 {
		t.Errorf("one of three: %v/s, burst %d; want 3.33/s, burst 33", l, b)
	}
	if err := store.Release(ctx, relayLease+"r3", "r3"); err != nil { // r3 stops
		t.Fatal(err)
	}
	now = now.Add(31 * time.Second) // r2's lease has run out too: it died
	relays[0].shareQuotas(ctx)
	if l, b := share(relays[0]); l != 10 || b != 100 {
		t.Errorf("alone again: %v/s, burst %d; want 10/s, burst 100", l, b)
	}
}
