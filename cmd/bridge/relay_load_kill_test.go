package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// loadEndpoints is how many webhook endpoints the load test configures; every event goes to
// each of them.
const loadEndpoints = 10

// loadEventTypes are the events each job of the load test commits, in this order, and the
// types every endpoint subscribes to.
var loadEventTypes = []string{bridge.EventUploaded, bridge.EventReportCompleted, bridge.EventCompleted}

// loadKey is one message at one endpoint: the path it was posted to and its webhook-id.
type loadKey struct{ path, id string }

// loadReceipts is what the receiver saw of one message: the bridge run that sent each copy,
// and the SHA-256 of the first copy's body.
type loadReceipts struct {
	runs []int
	sum  [32]byte
}

// loadReceiver is the CRM behind every endpoint of the load test: it answers 200 at once,
// verifies every message's signature with its endpoint's secret, and notes each receipt of each
// (path, webhook-id) with the bridge run under way when it arrived.
type loadReceiver struct {
	secrets map[string]webhook.Secret // by path
	run     atomic.Int64              // the bridge run under way, 0-based
	count   atomic.Int64              // messages accepted

	mu      sync.Mutex
	got     map[loadKey]*loadReceipts
	badSig  int // failed verification (answered 401)
	stray   int // posted to no endpoint's path (answered 404)
	changed int // copies whose body differs from the message's first copy
}

func (rx *loadReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	run := int(rx.run.Load())
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // cut by a kill: the relay heard no answer
	}
	secret, ok := rx.secrets[r.URL.Path]
	if !ok {
		rx.mu.Lock()
		rx.stray++
		rx.mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if err := webhook.Verify(r.Header, body, time.Now(), 0, secret); err != nil {
		rx.mu.Lock()
		rx.badSig++
		rx.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	sum := sha256.Sum256(body)
	k := loadKey{r.URL.Path, r.Header.Get(webhook.HeaderID)}
	rx.mu.Lock()
	rec := rx.got[k]
	if rec == nil {
		rec = &loadReceipts{sum: sum}
		rx.got[k] = rec
	} else if rec.sum != sum {
		rx.changed++
	}
	rec.runs = append(rec.runs, run)
	rx.mu.Unlock()
	rx.count.Add(1)
	w.WriteHeader(http.StatusOK)
}

// loadChild is one `bridge run` of the load test, its stderr drained into a short tail.
type loadChild struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	tail []string
	done chan struct{} // closed when stderr ends
}

// startLoadChild starts `bridge run` with config, logging at WARN: one line per delivery at
// INFO would make the log, not the relay, the load.
func startLoadChild(t *testing.T, config string) *loadChild {
	t.Helper()
	cmd, lines := bridgeProcess(t, config, "", "run", "--log-level", "warn")
	c := &loadChild{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		lines.Buffer(make([]byte, 64*1024), 1024*1024)
		for lines.Scan() {
			c.mu.Lock()
			c.tail = append(c.tail[max(0, len(c.tail)-39):], lines.Text())
			c.mu.Unlock()
		}
	}()
	return c
}

// output is the last lines the child wrote.
func (c *loadChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// stop sends sig and waits for the child and its stderr.
func (c *loadChild) stop(sig syscall.Signal) {
	c.cmd.Process.Signal(sig)
	c.cmd.Wait()
	<-c.done
}

// TestRelayLoadKill is the relay's durability at full load: `bridge run` (a child process, the
// embedded SQLite store) relays a backlog of thousands of events, and events still being
// committed, to 10 endpoints on a loopback receiver answering 200 at once, and is killed with
// SIGKILL 5 times while deliveries flow, restarted each time, then left to drain. It checks that
// no event is lost (every event of the outbox reached every endpoint with its delivery's
// webhook-id, and the store shows every delivery delivered, with one successful attempt
// recorded), and that duplicates are only messages whose acknowledgement the relay had not
// recorded when it was killed: a message recorded delivered is never sent again, and the copies
// the receiver acknowledged and the store did not record at each kill are bounded by what the
// relay holds in flight. Every copy's signature verifies and repeats carry the same body.
func TestRelayLoadKill(t *testing.T) {
	t.Parallel() // child processes, mostly waiting: overlaps the other long tests
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	const (
		kills        = 5
		backlogJobs  = 3000 // committed before the first start: 9,000 events, 90,000 deliveries
		producerJobs = 3000 // at most, committed while the bridge is being killed
		produceEvery = 20 * time.Millisecond
		// minNew is how many messages the receiver must see from a run before it may be killed.
		minNew = 300
		// lease and timeout are relay.lease and every endpoint's timeout: a killed run's claims
		// come back after lease.
		lease   = 15 * time.Second
		timeout = 5 * time.Second
		// perEndpoint is relay.Relay.PerEndpoint's default, which bridge run keeps: the
		// workers of one endpoint's lane.
		perEndpoint = 4
		// laneCap is what one endpoint's lane holds at most (relay.LaneRounds of PerEndpoint
		// claimed ahead).
		laneCap = relay.LaneRounds * perEndpoint
	)
	// What the relay may have sent and not recorded when it is killed, from its settings: a
	// lane counts a claimed delivery as held (queued, being sent, or its attempt awaiting the
	// group commit) until the commit that records the attempt has committed, and claims only
	// the room left, so the records awaiting commit are inside laneCap (a commit's claims are
	// made for the room its records free, and both commit together). A SIGKILL can therefore
	// leave at most laneCap deliveries per endpoint acknowledged by the receiver and not
	// recorded; they are sent again once their lease runs out, and nothing else is. Over the
	// test, at most kills × loadEndpoints × laneCap duplicates.
	perKill := loadEndpoints * laneCap
	bound := kills * perKill

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	t.Logf("load-kill seed %d: %d endpoints, lane capacity %d, duplicates bound %d kills × %d = %d",
		seed, loadEndpoints, laneCap, kills, perKill, bound)

	sb := sandboxtest.Start(t)
	dir := t.TempDir()
	rx := &loadReceiver{secrets: map[string]webhook.Secret{}, got: map[loadKey]*loadReceipts{}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	var hooks strings.Builder
	endpointPath := map[string]string{}
	for i := range loadEndpoints {
		name := fmt.Sprintf("crm%d", i)
		secret, err := webhook.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		path := "/" + name
		rx.secrets[path], endpointPath[name] = secret, path
		file := filepath.Join(dir, name+".whsec")
		if err := os.WriteFile(file, []byte(secret.Encode()), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&hooks, `
  - {name: %s, url: %q, secret_file: %q, events: [%s], payload: thin, timeout: %s, allow_private: true,
     retry_schedule: [100ms, 200ms, 500ms, 1s, 1s, 2s, 2s, 2s, 2s, 2s, 2s, 2s]}`,
			name, srv.URL+path, file, strings.Join(loadEventTypes, ", "), timeout)
	}
	dbPath := filepath.Join(dir, "bridge.db")
	config := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q}
store: {dsn: %q}
relay: {lease: %s, interval: 100ms}
webhooks:%s
`, sb.URL, dbPath, lease, hooks.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// The events are committed the way the pipeline commits them: a job's state change and
	// its events in one transaction (Store.Update), each event published on the bus with it.
	ctx := context.Background()
	store, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	raw, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	recs := make([]connectors.Recording, backlogJobs+producerJobs)
	for i := range recs {
		recs[i] = connectors.Recording{ItemID: fmt.Sprintf("rec-%05d", i), Version: "1", Name: "call.m4a"}
	}
	// Jobs of a source the configuration does not name: the pipeline leaves them alone.
	jobs, err := store.AddRecordings(ctx, "load", recs, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	commitJob := func(j *bridge.Job) error {
		j.State, j.TranscriptionID, j.UpdatedAt = bridge.StateDone, "tr-"+j.ItemID, time.Now()
		evs := make([]bridge.Event, len(loadEventTypes))
		for k, typ := range loadEventTypes {
			evs[k] = bridge.NewEvent(typ, j, map[string]any{"note": "load"})
		}
		return store.Update(ctx, j, bridge.StateDiscovered, "", evs...)
	}
	start := time.Now()
	for i := range backlogJobs {
		if err := commitJob(&jobs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var backlogLast int64
	if err := raw.QueryRowContext(ctx, `SELECT MAX(id) FROM outbox`).Scan(&backlogLast); err != nil {
		t.Fatal(err)
	}
	t.Logf("backlog: %d events committed in %s", backlogJobs*len(loadEventTypes), time.Since(start).Round(time.Millisecond))

	// The backlog is fanned out before any is sent, as for an endpoint re-enabled after an
	// outage: the endpoints start disabled (the relay fans out to them and claims nothing),
	// and are enabled once the first run has fanned the backlog out. Fanning out and sending
	// cost the committer alike, so without this the relay would send as fast as it fans out,
	// and after a kill (the dead run's hold on the bus lasts the bus's lease, 15 s) the next
	// run would have nothing to send.
	for name := range endpointPath {
		if err := store.DisableEndpoint(ctx, name, "load test: backlog first", time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	// The producer keeps committing while the bridge is killed: fan-outs are in flight at
	// kills too, not only sends.
	var produced atomic.Int64
	produced.Store(backlogJobs)
	stopProducer := make(chan struct{})
	stopProducing := sync.OnceFunc(func() { close(stopProducer) })
	defer stopProducing() // a fatal failure halfway
	producerDone := make(chan error, 1)
	produce := func() {
		tick := time.NewTicker(produceEvery)
		defer tick.Stop()
		for i := backlogJobs; i < len(jobs); i++ {
			select {
			case <-stopProducer:
				producerDone <- nil
				return
			case <-tick.C:
			}
			if err := commitJob(&jobs[i]); err != nil {
				producerDone <- fmt.Errorf("commit job %s: %w", jobs[i].ID, err)
				return
			}
			produced.Add(1)
		}
		producerDone <- nil
	}

	// recordedAt is, per webhook-id, the first kill after which the store showed its delivery
	// delivered.
	recordedAt := map[string]int{}
	snapshot := func(k int) int {
		rows, err := raw.QueryContext(ctx, `SELECT webhook_id FROM deliveries WHERE status = 'delivered'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			n++
			if _, ok := recordedAt[id]; !ok {
				recordedAt[id] = k
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The kills: each run is killed once the receiver has had minNew messages from it, after
	// a random wait, at the next message the receiver gets: in the middle of the flow.
	runStart := time.Now()
	var runs []*loadChild
	for k := range kills {
		rx.run.Store(int64(k))
		c := startLoadChild(t, config)
		base := rx.count.Load()
		deadline := time.Now().Add(60 * time.Second)
		waitFor := func(what string, done func() bool) {
			for !done() {
				if time.Now().After(deadline) {
					c.stop(syscall.SIGKILL)
					t.Fatalf("run %d: %s not reached in a minute (%d messages received in the run); last lines of the bridge:\n%s",
						k+1, what, rx.count.Load()-base, c.output())
				}
				time.Sleep(time.Millisecond)
			}
		}
		if k == 0 {
			waitFor("the backlog fanned out", func() bool {
				var n int
				if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND id <= ?`, backlogLast).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 0
			})
			t.Logf("backlog fanned out in %s", time.Since(runStart).Round(time.Millisecond))
			for name := range endpointPath {
				// Once the first endpoints are enabled, the bridge's writer commits back to
				// back: EnableEndpoint waits through it (sqlite's patient).
				if err := store.EnableEndpoint(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
			go produce()
		}
		waitFor(fmt.Sprintf("%d messages", minNew), func() bool { return rx.count.Load() >= base+minNew })
		time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
		idle := time.Now()
		n := rx.count.Load()
		waitFor("a message to kill at", func() bool { return rx.count.Load() > n })
		c.stop(syscall.SIGKILL)
		idleFor := time.Since(idle)
		runs = append(runs, c)
		if idleFor > 5*time.Second {
			t.Errorf("kill %d: the receiver waited %s for a message before it, want the relay busy", k+1, idleFor.Round(time.Millisecond))
		}
		// A request of the dead run still being handled lands in its run.
		time.Sleep(200 * time.Millisecond)
		delivered := snapshot(k)
		t.Logf("kill %d at %s: %d messages received in the run, the next one after %s; %d of %d deliveries recorded delivered",
			k+1, time.Since(runStart).Round(time.Millisecond), rx.count.Load()-base, idleFor.Round(time.Millisecond), delivered,
			produced.Load()*int64(len(loadEventTypes)*loadEndpoints))
	}
	stopProducing()
	if err := <-producerDone; err != nil {
		t.Errorf("producer: %v", err)
	}
	events := int(produced.Load()) * len(loadEventTypes)
	want := events * loadEndpoints

	// The last run drains everything.
	rx.run.Store(kills)
	drainStart := time.Now()
	c := startLoadChild(t, config)
	// The drain may take as long as it makes progress (a race-built child on two cores shared
	// with other tests took over 2 minutes): it fails when nothing moved for drainStall, or
	// after drainMax in all (inside the package's 10 minutes).
	const drainStall, drainMax = 30 * time.Second, 4 * time.Minute
	var unfanned, open, total int
	lastMove, last := time.Now(), [3]int{-1, -1, -1}
	for {
		err := raw.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL),
			(SELECT COUNT(*) FROM deliveries WHERE status != 'delivered'), (SELECT COUNT(*) FROM deliveries)`).Scan(&unfanned, &open, &total)
		if err != nil {
			t.Fatal(err)
		}
		if unfanned == 0 && open == 0 && total >= want {
			break
		}
		if now := [3]int{unfanned, open, total}; now != last {
			last, lastMove = now, time.Now()
		}
		if still := time.Since(lastMove); still > drainStall {
			t.Errorf("draining stalled: nothing fanned out, delivered or written for %s", still.Round(time.Second))
			break
		}
		if time.Since(drainStart) > drainMax {
			t.Errorf("still draining after %s", drainMax)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	drained := time.Since(drainStart)
	c.stop(syscall.SIGTERM)
	runs = append(runs, c)
	defer func() {
		if t.Failed() {
			for i, c := range runs {
				t.Logf("run %d of the bridge (--log-level warn), its last lines:\n%s", i+1, c.output())
			}
		}
	}()
	if unfanned > 0 || open > 0 || total < want {
		t.Errorf("after %s of draining: %d events not fanned out, %d of %d deliveries not delivered (want 0 and 0 of %d); last lines of the bridge:\n%s",
			drained.Round(time.Millisecond), unfanned, open, total, want, c.output())
	}

	failed := checkLoadStore(t, ctx, store, raw, rx, endpointPath, events)
	dups, unrecorded := checkLoadDuplicates(t, rx, recordedAt, kills, laneCap, failed)
	if unrecorded > bound {
		t.Errorf("duplicates left by the kills = %d, want at most %d (kills × endpoints × lane capacity)", unrecorded, bound)
	}
	t.Logf("load-kill: %d events, %d deliveries, %d kills, %d messages received, %d duplicates (%d acknowledged and not recorded at the kills, "+
		"%d failed attempts; bound %d); drained in %s after the last start, %s in all",
		events, want, kills, rx.count.Load(), dups, unrecorded, failed, bound, drained.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// checkLoadStore checks the store against the receiver: every event of the outbox fanned out
// to every endpoint, each delivery delivered with exactly one successful attempt recorded, and
// received at its endpoint with its webhook-id; nothing received that no delivery sent. It
// returns the failed attempts recorded (none expected: the receiver answers 200 at once; a
// timeout on a starved machine would be one, its message legitimately sent again).
func checkLoadStore(t *testing.T, ctx context.Context, store *sqlite.Store, raw *sql.DB, rx *loadReceiver, endpointPath map[string]string, events int) (failed int) {
	t.Helper()
	if pending, err := store.PendingEvents(ctx, 10); err != nil {
		t.Fatal(err)
	} else if len(pending) > 0 {
		t.Errorf("events not fanned out = %d (first %d), want 0", len(pending), pending[0].ID)
	}
	rows, err := raw.QueryContext(ctx, `SELECT id, type FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var outbox []bridge.Event
	for rows.Next() {
		var e bridge.Event
		if err := rows.Scan(&e.ID, &e.Type); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(loadEventTypes, e.Type) {
			outbox = append(outbox, e)
		}
	}
	rows.Close()
	if len(outbox) != events {
		t.Errorf("events of the subscribed types in the outbox = %d, want %d (committed)", len(outbox), events)
	}
	ds, err := store.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type evEndpoint struct {
		event    int64
		endpoint string
	}
	byEvent := map[evEndpoint]bridge.Delivery{}
	sent := map[loadKey]bool{}
	for _, d := range ds {
		byEvent[evEndpoint{d.EventID, d.Endpoint}] = d
		sent[loadKey{endpointPath[d.Endpoint], d.WebhookID}] = true
	}
	// Successful and failed attempts recorded per delivery.
	ok, failedOf := map[string]int{}, map[string]int{}
	rows, err = raw.QueryContext(ctx, `SELECT delivery_id, SUM(status BETWEEN 200 AND 299), SUM(NOT status BETWEEN 200 AND 299) FROM delivery_attempts GROUP BY delivery_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n, f int
		if err := rows.Scan(&id, &n, &f); err != nil {
			t.Fatal(err)
		}
		ok[id], failedOf[id] = n, f
	}
	rows.Close()

	rx.mu.Lock()
	defer rx.mu.Unlock()
	lost, notDelivered, reported := 0, 0, 0
	report := func(format string, args ...any) {
		if reported++; reported <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, e := range outbox {
		for name, path := range endpointPath {
			d, found := byEvent[evEndpoint{e.ID, name}]
			if !found {
				lost++
				report("event %d (%s) at %s: no delivery, want one", e.ID, e.Type, name)
				continue
			}
			if d.Status != bridge.DeliveryDelivered || ok[d.ID] != 1 {
				notDelivered++
				_, attempts, _ := store.Delivery(ctx, d.ID)
				report("delivery %s (event %d, %s, %s): status %s with %d successful attempts recorded (attempts %d, last %d %q; history %+v), want delivered with 1",
					d.ID, e.ID, name, d.WebhookID, d.Status, ok[d.ID], d.Attempts, d.LastStatus, d.LastError, attempts)
			}
			if rx.got[loadKey{path, d.WebhookID}] == nil {
				lost++
				report("delivery %s (event %d, %s, %s, %s, %d attempts): never received, want received", d.ID, e.ID, name, d.WebhookID, d.Status, d.Attempts)
			}
		}
	}
	if lost > 0 || notDelivered > 0 {
		t.Errorf("lost = %d, not delivered = %d of %d deliveries, want 0 and 0", lost, notDelivered, len(outbox)*len(endpointPath))
	}
	if len(ds) != len(outbox)*len(endpointPath) {
		t.Errorf("deliveries in the store = %d, want %d (events × endpoints)", len(ds), len(outbox)*len(endpointPath))
	}
	unknown := 0
	for k := range rx.got {
		if !sent[k] {
			unknown++
		}
	}
	if unknown > 0 {
		t.Errorf("messages received that no delivery sent = %d, want 0", unknown)
	}
	for id, f := range failedOf {
		if failed += f; f > 0 {
			_, attempts, _ := store.Delivery(ctx, id)
			t.Logf("delivery %s: %d failed attempts recorded (history %+v)", id, f, attempts)
		}
	}
	if rx.badSig > 0 || rx.stray > 0 || rx.changed > 0 {
		t.Errorf("bad signatures = %d, stray requests = %d, repeats with another body = %d; want 0 each",
			rx.badSig, rx.stray, rx.changed)
	}
	return failed
}

// checkLoadDuplicates checks the receiver's repeats against the kills: no message is received
// again in a run after a kill that found it recorded delivered, and at each kill the messages
// received in that run and not recorded (acknowledged by the receiver, unknown to the store)
// are at most laneCap per endpoint. It returns the duplicates (copies beyond the first) and the
// messages acknowledged and not recorded at the kills. Every one of those is sent again, and
// nothing else is but the messages of the failed attempts recorded: unrecorded ≤ duplicates ≤
// unrecorded + failed (equal when no attempt failed).
func checkLoadDuplicates(t *testing.T, rx *loadReceiver, recordedAt map[string]int, kills, laneCap, failed int) (dups, unrecorded int) {
	t.Helper()
	rx.mu.Lock()
	defer rx.mu.Unlock()
	// perKill[k][path] counts the messages received in run k and not recorded at kill k.
	perKill := make([]map[string]int, kills)
	for k := range perKill {
		perKill[k] = map[string]int{}
	}
	resent := 0
	for key, rec := range rx.got {
		dups += len(rec.runs) - 1
		at, recorded := recordedAt[key.id]
		seen := map[int]bool{}
		for _, run := range rec.runs {
			if recorded && run > at {
				if resent++; resent <= 10 {
					t.Errorf("%s at %s: received in run %d, after kill %d found it recorded delivered (runs %v)", key.id, key.path, run+1, at+1, rec.runs)
				}
			}
			if run < kills && (!recorded || at > run) && !seen[run] {
				seen[run] = true
				perKill[run][key.path]++
				unrecorded++
			}
		}
	}
	if resent > 0 {
		t.Errorf("copies sent after their delivery was recorded = %d, want 0", resent)
	}
	for k, byPath := range perKill {
		n, most := 0, 0
		for path, c := range byPath {
			n, most = n+c, max(most, c)
			if c > laneCap {
				t.Errorf("kill %d, %s: messages acknowledged and not recorded = %d, want at most %d (the lane's capacity)", k+1, path, c, laneCap)
			}
		}
		t.Logf("kill %d: %d messages acknowledged by the receiver and not recorded (at most %d of one endpoint, lane capacity %d)", k+1, n, most, laneCap)
	}
	if dups < unrecorded || dups > unrecorded+failed {
		t.Errorf("duplicates = %d, want %d (the messages acknowledged and not recorded at the kills) plus at most %d (failed attempts)", dups, unrecorded, failed)
	}
	return dups, unrecorded
}
