package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// chainTypes are the events every job of the chain tests commits in one transaction, in order:
// event #1, #2 and #3.
var chainTypes = []string{bridge.EventUploaded, bridge.EventCompleted, bridge.EventReportCompleted}

// chainStore counts the chains the relay's claims lease as its batches commit: several
// deliveries of one job in one claim (bridge.ClaimItem), queued as one chain in the lane.
type chainStore struct {
	*sqlite.Store
	chains atomic.Int64
	// recordsAlone counts the batches of records alone; inFlight and overlapped the commits
	// running, and how many began beside another (relay.Relay.Committers above 1 writes
	// records apart).
	recordsAlone, inFlight, overlapped atomic.Int64
	// failRecords fails that many batches of records alone, before they are written: the
	// relay keeps their records for a later batch, sends nothing again.
	failRecords atomic.Int64
	// holdApart holds the first batch of records alone written until another commit begins (5 s
	// at most): with records written apart, the committer goes on beside it.
	holdApart        bool
	begun, heldApart atomic.Int64
}

// Commit implements bridge.BatchCommitter.
func (s *chainStore) Commit(ctx context.Context, b *bridge.DeliveryBatch) error {
	alone := len(b.Records) > 0 && len(b.FanOuts)+len(b.Claims)+len(b.Releases) == 0
	if alone && s.failRecords.Add(-1) >= 0 {
		return errors.New("store busy")
	}
	mine := s.begun.Add(1)
	if s.inFlight.Add(1) > 1 {
		s.overlapped.Add(1)
	}
	if alone && s.holdApart && s.heldApart.Add(1) == 1 {
		for deadline := time.Now().Add(5 * time.Second); s.begun.Load() == mine && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	err := s.Store.Commit(ctx, b)
	s.inFlight.Add(-1)
	if err != nil {
		return err
	}
	if alone {
		s.recordsAlone.Add(1)
	}
	for _, c := range b.Claims {
		per := map[string]int{}
		for _, d := range c.Claimed {
			per[d.JobID]++
		}
		for _, n := range per {
			if n > 1 {
				s.chains.Add(1)
			}
		}
	}
	return nil
}

// try is one request the receiver got: which of its job's events (1-based), and the answer.
type try struct{ event, status int }

// orderReceiver records every verified request per job, in arrival order; with failSecond it
// answers 500 to the first attempt of each job's event #2, 200 otherwise.
type orderReceiver struct {
	secret     webhook.Secret
	failSecond bool

	mu    sync.Mutex
	tries map[string][]try // by job id
	bad   int              // unverifiable or unrecognised requests
}

func (rx *orderReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m struct {
		Type string `json:"type"`
		Data struct {
			JobID string `json:"job_id"`
		} `json:"data"`
	}
	verr := webhook.Verify(r.Header, body, time.Now(), time.Hour, rx.secret)
	jerr := json.Unmarshal(body, &m)
	n := slices.Index(chainTypes, m.Type) + 1
	rx.mu.Lock()
	defer rx.mu.Unlock() // held until the answer is written: a later request is recorded after
	if verr != nil || jerr != nil || n == 0 || m.Data.JobID == "" {
		rx.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	tries := rx.tries[m.Data.JobID]
	status := http.StatusOK
	if rx.failSecond && n == 2 && !slices.ContainsFunc(tries, func(t try) bool { return t.event == 2 }) {
		status = http.StatusInternalServerError
	}
	rx.tries[m.Data.JobID] = append(tries, try{event: n, status: status})
	w.WriteHeader(status)
}

// delivered counts the requests answered 200.
func (rx *orderReceiver) delivered() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	n := 0
	for _, ts := range rx.tries {
		for _, t := range ts {
			if t.status == http.StatusOK {
				n++
			}
		}
	}
	return n
}

// chainSetup is a relay on a fresh SQLite store to one endpoint served by rx, with jobs jobs.
type chainSetup struct {
	store *chainStore
	rx    *orderReceiver
	relay *relay.Relay
	jobs  []bridge.Job
}

func newChainSetup(t *testing.T, jobs int, failSecond bool, committers int) *chainSetup {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	rx := &orderReceiver{secret: s, failSecond: failSecond, tries: map[string][]try{}}
	srv := httptest.NewServer(rx)
	t.Cleanup(srv.Close)
	// Retries within 25 to 75 ms (the schedule's jitter); a few of them before a dead letter.
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: srv.URL, Secrets: []webhook.Secret{s},
		AllowPrivate: true, Payload: relay.PayloadThin, RetrySchedule: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	cs := &chainStore{Store: store}
	added, err := store.AddRecordings(ctx, "inbox", manyRecordings(jobs), "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &chainSetup{store: cs, rx: rx, jobs: added,
		relay: withBus(t, store, &relay.Relay{Store: cs, Endpoints: []*relay.Endpoint{ep}, PerEndpoint: 4, Committers: committers})}
}

// emit commits job j's three events in one transaction, as a state change writes them.
func (c *chainSetup) emit(t *testing.T, j *bridge.Job) {
	t.Helper()
	evs := make([]bridge.Event, len(chainTypes))
	for k, typ := range chainTypes {
		evs[k] = bridge.NewEvent(typ, j, map[string]any{"seq": k + 1})
	}
	j.UpdatedAt = time.Now()
	if err := c.store.Update(context.Background(), j, j.State, "", evs...); err != nil {
		t.Fatal(err)
	}
}

// TestChainsKeepPerJobOrder: 20 jobs commit 3 events each in one transaction, half before Run
// starts and half while it runs, so the relay's claims lease them as chains. With failSecond
// the receiver fails the first attempt of every job's event #2: the rest of its chain (#3)
// must be given back and wait until #2 is delivered by its retry. Per job, the receiver must
// see exactly #1 (200), [#2 (500),] #2 (200), #3 (200): no event tried before the one ahead
// of it was delivered, none delivered twice, none lost; in the store every delivery ends
// delivered after the attempts it took. With two committers (as on PostgreSQL), the records
// go to transactions of their own beside the rest of the group commit, and the same holds. The
// first two batches of records alone fail: their records are kept for a later batch, nothing is
// sent again.
func TestChainsKeepPerJobOrder(t *testing.T) {
	for _, tc := range []struct {
		failSecond bool
		committers int
	}{{true, 1}, {false, 1}, {true, 2}, {false, 2}} {
		failSecond := tc.failSecond
		t.Run(fmt.Sprintf("failSecond=%v/committers=%d", failSecond, tc.committers), func(t *testing.T) {
			const jobs = 20
			c := newChainSetup(t, jobs, failSecond, tc.committers)
			c.store.failRecords.Store(2)
			c.store.holdApart = tc.committers > 1
			for i := range jobs / 2 {
				c.emit(t, &c.jobs[i])
			}
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.relay.Run(ctx, 10*time.Millisecond) }()
			for i := jobs / 2; i < jobs; i++ {
				c.emit(t, &c.jobs[i])
			}
			want := jobs * len(chainTypes)
			waitFor(t, "every event delivered", func() bool { return c.rx.delivered() >= want && c.allDelivered(want) })
			stop()
			if err := <-done; err != nil {
				t.Errorf("Run = %v", err)
			}
			c.checkReceived(t, failSecond)
			c.checkStore(t, want, failSecond)
			if c.store.chains.Load() == 0 {
				t.Errorf("no claim leased several deliveries of one job: the test did not exercise chains")
			}
			if overlapped := c.store.overlapped.Load(); (tc.committers > 1) != (overlapped > 0) {
				t.Errorf("%d commits began beside another with %d committers: the test did not exercise what it says", overlapped, tc.committers)
			}
			t.Logf("%d chains leased; %d batches of records alone, %d commits beside another", c.store.chains.Load(),
				c.store.recordsAlone.Load(), c.store.overlapped.Load())
		})
	}
}

// allDelivered reports whether the store holds want deliveries, every one delivered.
func (c *chainSetup) allDelivered(want int) bool {
	ds, err := c.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm", Status: bridge.DeliveryDelivered})
	return err == nil && len(ds) >= want
}

// checkReceived checks each job's requests: every one is for the event after the last one
// delivered (so #3 never comes before #2's 200, and nothing delivered comes again), all three
// end delivered, and only the first attempt of #2 failed when failSecond.
func (c *chainSetup) checkReceived(t *testing.T, failSecond bool) {
	t.Helper()
	c.rx.mu.Lock()
	defer c.rx.mu.Unlock()
	if c.rx.bad != 0 {
		t.Errorf("%d requests unverifiable or unrecognised", c.rx.bad)
	}
	if len(c.rx.tries) != len(c.jobs) {
		t.Errorf("requests for %d jobs, want %d", len(c.rx.tries), len(c.jobs))
	}
	wantFailed := 0
	if failSecond {
		wantFailed = 1
	}
	for _, j := range c.jobs {
		if err := checkTries(c.rx.tries[j.ID], wantFailed); err != nil {
			t.Errorf("job %s: %v", j.ItemID, err)
		}
	}
}

// checkTries checks one job's requests, in arrival order: each is for the event after the last
// one delivered, all end delivered, wantFailed of them failed.
func checkTries(tries []try, wantFailed int) error {
	delivered, failed := 0, 0
	for _, tr := range tries {
		if tr.event != delivered+1 {
			return fmt.Errorf("event #%d tried after #%d was delivered (requests %v)", tr.event, delivered, tries)
		}
		if tr.status == http.StatusOK {
			delivered++
		} else {
			failed++
		}
	}
	if delivered != len(chainTypes) || failed != wantFailed {
		return fmt.Errorf("%d events delivered, %d attempts failed (requests %v); want %d and %d",
			delivered, failed, tries, len(chainTypes), wantFailed)
	}
	return nil
}

// checkStore checks the store: want deliveries, each delivered, #2 after two attempts when
// failSecond, every other after one.
func (c *chainSetup) checkStore(t *testing.T, want int, failSecond bool) {
	t.Helper()
	ds, err := c.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm"})
	if err != nil || len(ds) != want {
		t.Fatalf("Deliveries = %d, %v; want %d", len(ds), err, want)
	}
	for _, d := range ds {
		attempts := 1
		if failSecond && d.Type == chainTypes[1] {
			attempts = 2
		}
		if d.Status != bridge.DeliveryDelivered || d.Attempts != attempts {
			t.Errorf("delivery %s of job %s: %s after %d attempts, want delivered after %d", d.Type, d.JobID, d.Status, d.Attempts, attempts)
		}
	}
}
