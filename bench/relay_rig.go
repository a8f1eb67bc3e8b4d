package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	pgbus "github.com/transcript-bridge/bridge/bridge/postgres/bus"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/connectors"
)

// RelayOptions say where bridge bench relay runs: the embedded SQLite default, or PostgreSQL
// with its own bus or NATS JetStream, with one replica or several.
type RelayOptions struct {
	// Store is sqlite (default) or postgres.
	Store string
	// Bus is sql (default: the store's own) or nats.
	Bus string
	// Replicas is how many relays share the work (default 1), each as a replica of bridge run
	// would: a store handle, a bus subscriber in the consumer group "relay" (and, on NATS, a
	// forwarder of the outbox) of its own, in this process.
	Replicas int
	// DSN is the PostgreSQL server's (default $BRIDGE_TEST_POSTGRES_DSN): each run makes a
	// database of its own there and drops it afterwards.
	DSN string
	// NATSURL is the NATS server's (default $BRIDGE_TEST_NATS_URL): each run makes a stream of
	// its own there and deletes it afterwards.
	NATSURL string
	// NATSMaxInFlight is bus.max_in_flight of the NATS bus (0: its default).
	NATSMaxInFlight int
	// CPUProfile, when set with --store postgres, is a file for a CPU profile of the measured
	// drain (the backlog's, from the relays' start to the last delivery's record), for go tool
	// pprof.
	CPUProfile string
}

// replicaStore counts the deliveries its replica records delivered, and the rig's total.
type replicaStore struct {
	relay.Store
	rig       *scaleRig
	delivered atomic.Int64
	commits   atomic.Int64
	busy      atomic.Int64 // nanoseconds spent in Commit
}

// Commit implements bridge.BatchCommitter and counts what it recorded delivered.
func (c *replicaStore) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	start := time.Now()
	if err := c.Store.Commit(ctx, b); err != nil {
		return err
	}
	c.busy.Add(int64(time.Since(start)))
	c.commits.Add(1)
	n := int64(0)
	for _, it := range b.Records {
		if it.Err == nil && it.Delivery.Status == bridge.DeliveryDelivered {
			n++
		}
	}
	c.delivered.Add(n)
	if c.rig.total.Add(n) >= c.rig.want && c.rig.want > 0 {
		c.rig.once.Do(func() { close(c.rig.done) })
	}
	return nil
}

// scaleRig is one run on PostgreSQL: a database of its own, replicas each with a store handle,
// a bus subscriber and a relay, and the jobs whose events they deliver.
type scaleRig struct {
	stores   []*postgres.Store
	counted  []*replicaStore
	relays   []*relay.Relay
	closers  []func()
	jobs     []bridge.Job
	want     int64
	total    atomic.Int64
	done     chan struct{}
	once     sync.Once
	emitNext atomic.Int64
}

// newScaleRig makes a database and (with bus nats) a stream of their own, o.Replicas relays
// to rx's endpoints, and jobs jobs.
func newScaleRig(ctx context.Context, o RelayOptions, rx *receiver, jobs int) (_ *scaleRig, err error) {
	r := &scaleRig{done: make(chan struct{})}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	dsn, drop, err := scratchDatabase(ctx, o.DSN)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, drop)
	var ncfg natsbus.Config
	if o.Bus == "nats" {
		id := randomHex()
		ncfg = natsbus.Config{URL: o.NATSURL, SubjectPrefix: "bench_" + id, Stream: "BENCH_" + id, MaxInFlight: o.NATSMaxInFlight}
		if err := ncfg.Validate(); err != nil { // its defaults, as bridge run's
			return nil, err
		}
		r.closers = append(r.closers, func() { deleteStream(o.NATSURL, ncfg.Stream) })
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	for range o.Replicas {
		if err := r.addReplica(ctx, dsn, o.Bus, ncfg, rx, secret); err != nil {
			return nil, err
		}
	}
	recs := make([]connectors.Recording, jobs)
	for i := range recs {
		recs[i] = connectors.Recording{ItemID: fmt.Sprint("rec-", i), Version: "1", Name: "meeting.m4a"}
	}
	if r.jobs, err = r.stores[0].AddRecordings(ctx, "bench", recs, "", time.Now()); err != nil {
		return nil, fmt.Errorf("add recordings: %w", err)
	}
	return r, nil
}

// addReplica opens one replica: its store handle, bus and relay.
func (r *scaleRig) addReplica(ctx context.Context, dsn, busDriver string, ncfg natsbus.Config, rx *receiver, secret webhook.Secret) error {
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	r.stores = append(r.stores, store)
	r.closers = append(r.closers, func() { store.Close() })
	var eps []*relay.Endpoint
	for i := range relayEndpoints {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: fmt.Sprint("crm", i), URL: fmt.Sprintf("%s/crm%d", rx.url, i),
			Secrets: []webhook.Secret{secret}, AllowPrivate: true, Payload: relay.PayloadThin, Timeout: 10 * time.Second})
		if err != nil {
			return err
		}
		eps = append(eps, ep)
	}
	counted := &replicaStore{Store: store, rig: r}
	rl := &relay.Relay{Store: counted, Endpoints: eps, Committers: relay.CommittersPostgres} // as bridge run on PostgreSQL
	if busDriver == "nats" {
		pub, sub, err := natsbus.New(ncfg, nil)
		if err != nil {
			return fmt.Errorf("nats bus: %w", err)
		}
		outbox, _, err := store.Bus(pgbus.SubscriberConfig{ConsumerGroup: "nats-forwarder", InFlight: min(ncfg.MaxInFlight, relay.BusInFlight),
			PollInterval: relay.BusPollInterval, Lease: relay.BusLease}, nil)
		if err != nil {
			pub.Close()
			sub.Close()
			return err
		}
		fwd, err := natsbus.Forward(ctx, outbox, pub, bridge.EventsTopic, nil)
		if err != nil {
			outbox.Close()
			pub.Close()
			sub.Close()
			return err
		}
		r.closers = append(r.closers, func() { fwd.Close(); outbox.Close(); sub.Close(); pub.Close() })
		rl.Bus, rl.Poison = sub, pub
	} else {
		sub, poison, err := store.Bus(pgbus.SubscriberConfig{ConsumerGroup: "relay", InFlight: relay.BusInFlight,
			PollInterval: relay.BusPollInterval, Lease: relay.BusLease}, nil)
		if err != nil {
			return err
		}
		r.closers = append(r.closers, func() { sub.Close() })
		rl.Bus, rl.Poison = sub, poison
	}
	r.counted = append(r.counted, counted)
	r.relays = append(r.relays, rl)
	return nil
}

// start runs every replica's relay until the returned stop is called; stop returns the first
// relay's error other than its cancellation.
func (r *scaleRig) start(ctx context.Context) (stop func() error, failed <-chan error) {
	rctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, len(r.relays))
	var wg sync.WaitGroup
	for _, rl := range r.relays {
		wg.Go(func() {
			if err := rl.Run(rctx, time.Second); err != nil && rctx.Err() == nil {
				errs <- err
			}
		})
	}
	return func() error {
		cancel()
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
			return nil
		}
	}, errs
}

// emit commits perJob events for job j on the next replica's store in turn (each replica
// writes its own jobs' events, as bridge run's do).
func (r *scaleRig) emit(ctx context.Context, j *bridge.Job, perJob int) error {
	store := r.stores[int(r.emitNext.Add(1))%len(r.stores)]
	types := []string{bridge.EventUploaded, bridge.EventCompleted, bridge.EventReportCompleted}
	evs := make([]bridge.Event, perJob)
	for k := range evs {
		evs[k] = bridge.NewEvent(types[k%len(types)], j, map[string]any{"note": note})
	}
	j.UpdatedAt = time.Now()
	return store.Update(ctx, j, j.State, "", evs...)
}

// close releases the replicas, the stream and the database, last made first.
func (r *scaleRig) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// scratchDatabase creates a database of its own on the server of dsn and returns its DSN and
// how to drop it.
func scratchDatabase(ctx context.Context, dsn string) (string, func(), error) {
	if dsn == "" {
		return "", nil, errors.New("no PostgreSQL DSN: give --dsn or set BRIDGE_TEST_POSTGRES_DSN")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	name := "bridge_bench_" + randomHex()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("PostgreSQL: create database %s: %w", name, err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			drop()
			return "", nil, err
		}
		u.Path, u.RawPath = "/"+name, ""
		return u.String(), drop, nil
	}
	return dsn + " dbname=" + name, drop, nil // in keyword/value form the last one wins
}

// deleteStream deletes the JetStream stream name on the server at url, if it can.
func deleteStream(server, name string) {
	nc, err := nats.Connect(server)
	if err != nil {
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js.DeleteStream(ctx, name)
}

func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// envOr returns v, or the environment variable key when v is empty.
func envOr(v, key string) string {
	if v != "" {
		return v
	}
	return os.Getenv(key)
}
