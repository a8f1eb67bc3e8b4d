package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
)

func init() { Register("relay", Relay) }

// relayEndpoints is how many endpoints every event goes to, each with the relay's default
// per-endpoint concurrency.
const relayEndpoints = 10

// relaySetup is one relay run's store, endpoints and event backlog.
type relaySetup struct {
	store   *sqlite.Store
	counted *countingStore
	relay   *relay.Relay
	sub     *bus.Subscriber
	jobs    []bridge.Job
}

// countingStore counts the deliveries the relay records delivered, as they commit.
type countingStore struct {
	relay.Store
	delivered atomic.Int64
	batches   atomic.Int64
	busy      atomic.Int64 // nanoseconds spent in Commit
	done      chan struct{}
	want      int64
	once      sync.Once
}

// Commit implements bridge.BatchCommitter and counts what it recorded delivered.
func (c *countingStore) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	start := time.Now()
	if err := c.Store.Commit(ctx, b); err != nil {
		return err
	}
	c.busy.Add(int64(time.Since(start)))
	c.batches.Add(1)
	n := int64(0)
	for _, it := range b.Records {
		if it.Err == nil && it.Delivery.Status == bridge.DeliveryDelivered {
			n++
		}
	}
	if c.delivered.Add(n) >= c.want && c.want > 0 {
		c.once.Do(func() { close(c.done) })
	}
	return nil
}

// newRelaySetup opens a fresh store in dir with jobs jobs, and a relay to the receiver's
// relayEndpoints endpoints reading the store's bus with window inFlight.
func newRelaySetup(ctx context.Context, dir string, rx *receiver, jobs, inFlight int) (*relaySetup, error) {
	store, err := sqlite.Open(ctx, filepath.Join(dir, "bridge.db"))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &relaySetup{store: store}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	var eps []*relay.Endpoint
	for i := range relayEndpoints {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: fmt.Sprint("crm", i), URL: fmt.Sprintf("%s/crm%d", rx.url, i),
			Secrets: []webhook.Secret{secret}, AllowPrivate: true, Payload: relay.PayloadThin, Timeout: 10 * time.Second})
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		eps = append(eps, ep)
	}
	recs := make([]connectors.Recording, jobs)
	for i := range recs {
		recs[i] = connectors.Recording{ItemID: fmt.Sprint("rec-", i), Version: "1", Name: "meeting.m4a"}
	}
	if s.jobs, err = store.AddRecordings(ctx, "bench", recs, "", time.Now()); err != nil {
		return nil, errors.Join(fmt.Errorf("add recordings: %w", err), s.close())
	}
	sub, poison, err := store.Bus(bus.SubscriberConfig{ConsumerGroup: "relay", PollInterval: relay.BusPollInterval, InFlight: inFlight}, nil)
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	s.sub = sub
	s.counted = &countingStore{Store: store, done: make(chan struct{})}
	s.relay = &relay.Relay{Store: s.counted, Endpoints: eps, Bus: sub, Poison: poison}
	return s, nil
}

func (s *relaySetup) close() error {
	if s.sub != nil {
		s.sub.Close()
	}
	return s.store.Close()
}

// note pads an event to a payload of about 1 KB.
var note = strings.Repeat("Quarterly review with the customer; action items follow. ", 15)[:850]

// emit commits perJob events for job j (one transaction, as a state change writes them).
func (s *relaySetup) emit(ctx context.Context, j *bridge.Job, perJob int) error {
	types := []string{bridge.EventUploaded, bridge.EventCompleted, bridge.EventReportCompleted}
	evs := make([]bridge.Event, perJob)
	for k := range evs {
		evs[k] = bridge.NewEvent(types[k%len(types)], j, map[string]any{"note": note})
	}
	j.UpdatedAt = time.Now()
	return s.store.Update(ctx, j, j.State, "", evs...)
}

// drain commits jobs×perJob events, then runs the relay until every delivery is recorded
// delivered, and returns deliveries per second from the relay's start to the last record's
// commit, and the number of group commits.
func drain(ctx context.Context, env Env, rx *receiver, jobs, perJob, inFlight int) (float64, int64, error) {
	dir, err := os.MkdirTemp(env.Dir, "relay-")
	if err != nil {
		return 0, 0, fmt.Errorf("scratch directory: %w", err)
	}
	s, err := newRelaySetup(ctx, dir, rx, jobs, inFlight)
	if err != nil {
		return 0, 0, err
	}
	defer s.close()
	for i := range s.jobs {
		if err := s.emit(ctx, &s.jobs[i], perJob); err != nil {
			return 0, 0, fmt.Errorf("emit: %w", err)
		}
	}
	n := int64(jobs * perJob * relayEndpoints)
	s.counted.want = n
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	start, cpu := time.Now(), cpuTime()
	go func() { done <- s.relay.Run(rctx, time.Second) }()
	select {
	case <-s.counted.done:
	case err := <-done:
		cancel()
		return 0, 0, fmt.Errorf("relay stopped: %w", err)
	case <-ctx.Done():
		cancel()
		<-done
		return 0, 0, ctx.Err()
	case <-time.After(10 * time.Minute):
		cancel()
		<-done
		return 0, 0, fmt.Errorf("relay: %d of %d deliveries recorded after 10 minutes", s.counted.delivered.Load(), n)
	}
	took := time.Since(start)
	env.Logf("bench relay: %d commits, %.1f s in Commit of %.1f s; %s", s.counted.batches.Load(), time.Duration(s.counted.busy.Load()).Seconds(),
		took.Seconds(), perItem(cpuTime()-cpu, took, int(n), "delivery"))
	cancel()
	<-done
	return float64(n) / took.Seconds(), s.counted.batches.Load(), nil
}
