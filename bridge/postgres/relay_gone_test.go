package postgres_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// TestGoneOnTwoReplicas: two replicas of the relay send to crm, which answers 410 Gone to
// every request, several at once; crm is disabled once, erp hears one endpoint.disabled, and
// crm is sent none of its own.
func TestGoneOnTwoReplicas(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := replicas(t, 2)
	var mu sync.Mutex
	heard := map[string]int{} // endpoint → requests
	const overlap = 3         // crm holds its first requests until this many are in, then answers them all
	gate := make(chan struct{})
	srv := func(name string, code int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			mu.Lock()
			heard[name]++
			if name == "crm" && heard[name] == overlap {
				close(gate)
			}
			mu.Unlock()
			if name == "crm" {
				select {
				case <-gate:
				case <-time.After(10 * time.Second): // the check below says the premise failed
				}
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	crmURL, erpURL := srv("crm", http.StatusGone), srv("erp", http.StatusOK)
	secret, _ := webhook.NewSecret()
	const jobs = 10
	writeEvents(t, rs, jobs) // before the relays start: their first claims take several each
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, s := range rs {
		var eps []*relay.Endpoint
		for name, url := range map[string]string{"crm": crmURL, "erp": erpURL} {
			ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: name, URL: url, Secrets: []webhook.Secret{secret}, AllowPrivate: true, Payload: relay.PayloadThin})
			if err != nil {
				t.Fatal(err)
			}
			eps = append(eps, ep)
		}
		sub, poison, err := s.Bus(bus.SubscriberConfig{PollInterval: 10 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		r := &relay.Relay{Store: s, Endpoints: eps, Bus: sub, Poison: poison, PerEndpoint: 4}
		wg.Go(func() {
			if err := r.Run(ctx, 20*time.Millisecond); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		})
	}

	// Settled: erp took every event and at least one endpoint.disabled, and no delivery to crm
	// is still out (every claim of crm recorded).
	deadline := time.Now().Add(90 * time.Second) // a bound for a loaded machine, not a measure
	var ds []bridge.Delivery
	for {
		var err error
		if ds, err = rs[1].Deliveries(ctx, bridge.DeliveryFilter{}); err != nil {
			t.Fatal(err)
		}
		erpDone, crmOut := 0, 0
		for _, d := range ds {
			if d.Endpoint == "erp" && d.Status == bridge.DeliveryDelivered {
				erpDone++
			}
			if d.Endpoint == "crm" && d.LeaseUntil.After(time.Now()) {
				crmOut++
			}
		}
		if erpDone > jobs && crmOut == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("erp took %d deliveries, %d still out to crm; want %d+ and none", erpDone, crmOut, jobs+1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // another endpoint.disabled would be fanned out now, if any
	if ds, _ = rs[1].Deliveries(ctx, bridge.DeliveryFilter{}); len(ds) == 0 {
		t.Fatal("no deliveries")
	}
	disabled := map[string]int{}
	for _, d := range ds {
		if d.Type == relay.EventEndpointDisabled {
			disabled[d.Endpoint]++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if disabled["erp"] != 1 || disabled["crm"] != 0 {
		t.Errorf("endpoint.disabled deliveries by endpoint = %v (crm answered %d requests), want erp 1, crm none", disabled, heard["crm"])
	}
	if heard["crm"] < overlap {
		t.Errorf("crm answered %d requests, want at least %d 410s at once (the premise of this test)", heard["crm"], overlap)
	}
}
