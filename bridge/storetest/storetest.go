// Package storetest is the contract suite every store of the bridge passes: bridge.Store (its
// JobStore, DeliveryStore and ExportStore) over one database, and the events that the writes publish on
// the bus (bridge.EventsTopic). The SQLite store runs it today, a PostgreSQL store will run it
// unchanged: an implementation calls Run once, with a function that makes a new, empty
// database.
//
// Every method has its cases: the happy path, the thing that is not there, the second call
// (idempotency, a stale compare-and-set), and the callers that race (claimers started
// together on one handle and on two handles of one database, as two processes or replicas
// have: exactly one wins). Time is always explicit (the now arguments, Job.UpdatedAt): a lease
// runs out because a later now is passed, never because the test slept. The only waits are for
// bus messages, bounded by a generous deadline that fails the test, never one that passes it.
package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// recording and owner are what a source found and says about its owner (the only types the
// suite names outside the store contract).
type (
	recording = connectors.Recording
	owner     = connectors.Owner
)

// Stores is one handle on a database under test: the store contract and its bus.
type Stores struct {
	// Store keeps jobs, cursors, history, the outbox, webhook deliveries and export runs; its
	// Close releases the whole handle.
	bridge.Store
	// Subscriber returns a new subscriber of the bus on which the database's writes publish
	// their events, in a consumer group of its own that reads every message published so far.
	// The suite closes it.
	Subscriber func() message.Subscriber
}

// Open opens one more handle on a database; the suite closes each handle it opens.
type Open func() Stores

// Run runs the whole suite. newDatabase makes a new, empty database for one subtest (a fresh
// file, a fresh PostgreSQL database) and returns how to open handles on it; it fails t when it
// cannot. Cases that need two handles call the returned Open twice.
func Run(t *testing.T, newDatabase func(t *testing.T) Open) {
	for _, m := range methods {
		t.Run(m.method, func(t *testing.T) {
			for _, c := range m.cases {
				t.Run(c.name, func(t *testing.T) {
					c.fn(t, newDB(t, newDatabase))
				})
			}
		})
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, d *db)
}

// methods lists the cases of every method of the contract, in the order of the interfaces.
var methods = []struct {
	method string
	cases  []testCase
}{
	{"AddRecordings", addRecordingsCases},
	{"AddRecordings/DedupeKey", dedupeCases},
	{"Cursor", cursorCases},
	{"Update", updateCases},
	{"Job", jobCases},
	{"Jobs", jobsCases},
	{"Jobs/Query", jobQueryCases},
	{"History", historyCases},
	{"Counts", countsCases},
	{"PendingEvents", pendingEventsCases},
	{"InstanceID", instanceIDCases},
	{"NoteMappingChange", noteMappingChangeCases},
	{"LastMappingChange", lastMappingChangeCases},
	{"Lease", leaseCases},
	{"Release", releaseCases},
	{"Leases", leasesCases},
	{"Close", closeCases},
	{"EventsTopic", busCases},
	{"FanOut", fanOutCases},
	{"Abandon", abandonCases},
	{"Claim", claimCases},
	{"Record", recordCases},
	{"Commit", commitCases},
	{"CommitFanOutLease", fanOutLeaseCases},
	{"Deliveries", deliveriesCases},
	{"Delivery", deliveryCases},
	{"Replay", replayCases},
	{"Replay/Missed", replayMissedCases},
	{"DisableEndpoint", disableEndpointCases},
	{"DisableEndpoint/Transition", disableTransitionCases},
	{"EnableEndpoint", enableEndpointCases},
	{"DisabledEndpoints", disabledEndpointsCases},
	{"EndpointAttempts", endpointAttemptsCases},
	{"AlertEndpoint", alertEndpointCases},
	{"EndpointRecovered", endpointRecoveredCases},
	{"ClaimRun", claimRunCases},
	{"RenewRun", renewRunCases},
	{"FinishRun", finishRunCases},
	{"Exported", exportedCases},
	{"Checkpoint", checkpointCases},
	{"Runs", runsCases},
	{"LastTick", lastTickCases},
	{"SourceOf", sourceOfCases},
	{"Audit", auditCases},
	{"Forget", forgetCases},
	{"Tombstoned", tombstonedCases},
	{"Purge", purgeCases},
}

// db is one subtest's database: its first handle (embedded) and how to open more.
type db struct {
	Stores
	t           *testing.T
	open        Open
	newDatabase func(t *testing.T) Open
}

func newDB(t *testing.T, newDatabase func(t *testing.T) Open) *db {
	t.Helper()
	d := &db{t: t, open: newDatabase(t), newDatabase: newDatabase}
	d.Stores = d.another()
	return d
}

// fresh returns another new, empty database in the same subtest.
func (d *db) fresh() *db {
	d.t.Helper()
	return newDB(d.t, d.newDatabase)
}

// another opens one more handle on the database (another process, another replica), closed
// when the subtest ends.
func (d *db) another() Stores {
	d.t.Helper()
	s := d.open()
	if s.Store == nil || s.Subscriber == nil {
		d.t.Fatalf("Open() = %+v: Store and Subscriber must both be set", s)
	}
	var once sync.Once
	d.t.Cleanup(func() { once.Do(func() { s.Close() }) })
	return Stores{Store: closeOnce{s.Store, &once}, Subscriber: s.Subscriber}
}

// closeOnce lets a case close a handle itself (Close's own cases) before the cleanup does.
type closeOnce struct {
	bridge.Store
	once *sync.Once
}

func (c closeOnce) Close() error {
	err := errors.New("storetest: the suite closed this handle twice")
	c.once.Do(func() { err = c.Store.Close() })
	return err
}

// t0 is the suite's clock: every time is t0 plus something.
var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

var ctx = context.Background()

// rec is one version of one item, with everything a source can say about it.
func rec(item, version string) recording {
	return recording{ItemID: item, Version: version, Name: item + ".wav", Size: 2048, ModTime: t0.Add(-time.Hour),
		Link: "https://example.com/" + item, SourceExternalID: "test:" + item + "@" + version,
		Owner:    &owner{Provider: "zoom", ID: "u-1", Email: "a@example.com", Name: "Ada"},
		Fields:   map[string]string{"team": "sales"},
		Metadata: map[string]string{"topic": "weekly " + item}}
}

// add stores recs as jobs of source at now, failing the test on an error.
func (d *db) add(t *testing.T, source string, now time.Time, recs ...recording) []bridge.Job {
	t.Helper()
	added, err := d.AddRecordings(ctx, source, recs, "", now)
	if err != nil || len(added) != len(recs) {
		t.Fatalf("AddRecordings(%s, %d recordings) = %d jobs, %v; want %d", source, len(recs), len(added), err, len(recs))
	}
	return added
}

// job adds one job of item a in source inbox.
func (d *db) job(t *testing.T) bridge.Job {
	t.Helper()
	return d.add(t, "inbox", t0, rec("a", "1"))[0]
}

// move writes j in state to, from its current state, at `at`, with events; it fails the test on
// an error and leaves j as stored.
func (d *db) move(t *testing.T, j *bridge.Job, to bridge.State, at time.Time, events ...bridge.Event) {
	t.Helper()
	from := j.State
	j.State, j.UpdatedAt = to, at
	if err := d.Update(ctx, j, from, "to "+string(to), events...); err != nil {
		t.Fatalf("Update(%s, %s → %s) = %v, want nil", j.ID, from, to, err)
	}
}

// together runs fn(0) … fn(n-1) in n goroutines released at the same moment, and waits for
// them all.
func together(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// handles returns the handles callers take turns on: the first only, or the first and a
// second one on the same database.
func (d *db) handles(two bool) []Stores {
	if two {
		return []Stores{d.Stores, d.another()}
	}
	return []Stores{d.Stores}
}

// onHandles names the two ways concurrent cases run.
var onHandles = []struct {
	name string
	two  bool
}{{"one handle", false}, {"two handles", true}}

// concurrent adds a case per way of onHandles: name + " on one handle" and " on two handles".
func concurrent(name string, fn func(t *testing.T, d *db, hs []Stores)) []testCase {
	var out []testCase
	for _, h := range onHandles {
		out = append(out, testCase{name + " on " + h.name, func(t *testing.T, d *db) { fn(t, d, d.handles(h.two)) }})
	}
	return out
}

func ids(jobs []bridge.Job) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ItemID)
	}
	return strings.Join(out, ",")
}
