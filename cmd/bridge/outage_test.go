package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/internal/pgtest"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// outageFiles is how many recordings each outage test feeds (over outageFeed).
const (
	outageFiles = 60
	outageFeed  = 40 * time.Second
	storeAway   = 20 * time.Second
	// storeAtStart is how long the server is down as the replicas start.
	storeAtStart = 3 * time.Second
)

// TestStoreOutage is issue 32's point 1: three replicas on a PostgreSQL cluster of the test's
// own, while recordings arrive. The replicas start while the server is down. It is restarted once while uploads, claims and
// deliveries are in flight, then stopped for 20 s and started again. Required: no replica
// exits, none spins (its CPU while the store is away stays low), each logs one WARN per outage
// rather than one per failed statement, /readyz says "store unreachable" while it is away,
// and afterwards every recording is transcribed once, charged once, delivered and exported.
// It prints the time to recover and the failures absorbed. On each bus driver.
func TestStoreOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the bridge as child processes and stops PostgreSQL for 20 s")
	}
	for _, bus := range []string{"sql", "nats"} {
		t.Run("bus="+bus, func(t *testing.T) {
			t.Parallel()
			runStoreOutage(t, bus)
		})
	}
}

func runStoreOutage(t *testing.T, busDriver string) {
	pg := pgtest.NewServer(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("store outage seed %d (bus %s, recordings %d)", seed, busDriver, outageFiles)
	rig := newReplicaRigWith(t, rigOptions{bus: busDriver, seed: seed, dsn: pgtest.NewOn(t, pg.DSN()), server: true})
	// The replicas start while the server is down: each waits for it (one WARN), none exits.
	pg.Stop()
	f := newFleet(t, rig.config, replicaCount)
	time.Sleep(storeAtStart)
	pg.Start()
	waitAllReady(t, f, 2*time.Minute) // every replica serves before the outages below
	start := time.Now()
	fed := rig.feed(outageFiles, outageFeed)

	// A restart while work is in flight.
	awaitFleet(t, f, "the first completions", 2*time.Minute, func() bool { return rig.rx.completedCount() >= 3 })
	pg.Restart()
	restarted := time.Now()
	t.Logf("restarted PostgreSQL at %s with %d completions accepted", restarted.Sub(start).Round(time.Millisecond), rig.rx.completedCount())

	// A 20 s outage, once work has moved again.
	before := rig.rx.completedCount()
	awaitFleet(t, f, "completions after the restart", 2*time.Minute, func() bool { return rig.rx.completedCount() >= before+3 })
	afterRestart := time.Since(restarted)
	cpu0 := f.cpu()
	pg.Stop()
	down := time.Now()
	unreachable := make([]bool, replicaCount)
	for time.Since(down) < storeAway {
		for i, addr := range f.addrs() {
			if !unreachable[i] && readyzSays(addr, "store unreachable") {
				unreachable[i] = true
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	cpu := f.cpu()
	pg.Start()
	up := time.Now()
	ready := waitAllReady(t, f, 2*time.Minute)
	completedAtUp := rig.rx.completedCount()
	var firstDelivery time.Duration
	awaitFleet(t, f, "a completion after the outage", 3*time.Minute, func() bool {
		if rig.rx.completedCount() > completedAtUp || completedAtUp == outageFiles {
			firstDelivery = time.Since(up)
			return true
		}
		return false
	})

	store := drainOutage(t, rig, f, fed)
	for i, ok := range unreachable {
		if !ok {
			t.Errorf("replica %d: /readyz never said \"store unreachable\" during the %s outage", i, storeAway)
		}
	}
	for i := range cpu {
		if used := cpu[i] - cpu0[i]; used > storeAway/4 {
			t.Errorf("replica %d used %s of CPU in the %s the store was away: it spins instead of backing off", i, used, storeAway)
		}
	}
	outages := checkOutageLog(t, f)
	checkChaosReceiver(t, rig.rx)
	checkChargedOnce(t, rig)
	uploads, attempts := checkStoreSettled(t, store, outageFiles)
	checkExports(t, store, rig.exports, replicaExport)
	var used []string
	for i := range cpu {
		used = append(used, (cpu[i] - cpu0[i]).String())
	}
	t.Logf("store outage (bus %s): work moved again %s after the restart; after the %s outage every /readyz was ready in %s and the first completion accepted in %s; "+
		"replicas' CPU while away %v; outages seen by the replicas (away, failures absorbed): %v; %d upload attempts (%d retries), %d delivery attempts; log lines %v",
		busDriver, afterRestart.Round(time.Millisecond), storeAway, ready.Round(time.Millisecond), firstDelivery.Round(time.Millisecond),
		used, outages, uploads, uploads-outageFiles, attempts, f.logCounts())
}

// awaitFleet polls cond every 100 ms until it holds, failing the test after within.
func awaitFleet(t *testing.T, f *fleet, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; last lines of the replicas:\n%s", what, within, f.tails())
		}
	}
}

// waitAllReady waits until every replica's /readyz answers 200 and returns how long it took.
func waitAllReady(t *testing.T, f *fleet, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	awaitFleet(t, f, "ready replicas", within, func() bool {
		for _, addr := range f.addrs() {
			if code, _ := readyz(addr); code != http.StatusOK {
				return false
			}
		}
		return true
	})
	return time.Since(start)
}

// readyz asks the replica at addr for /readyz.
func readyz(addr string) (int, server.Readiness) {
	var rd server.Readiness
	if addr == "" {
		return 0, rd
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, rd
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&rd)
	return resp.StatusCode, rd
}

// readyzSays reports whether the replica at addr answers /readyz with a failed store check
// whose error contains want.
func readyzSays(addr, want string) bool {
	_, rd := readyz(addr)
	for _, c := range rd.Checks {
		if c.Name == "store" && !c.OK && strings.Contains(c.Error, want) {
			return true
		}
	}
	return false
}

// reachableAgain is the line a replica logs when the store answers again.
var reachableAgain = regexp.MustCompile(`msg="store reachable again" away=(\S+) failures=(\d+)`)

// checkOutageLog: no replica process logged more than three "store unreachable" WARNs (one per
// outage: at its start, the restart and the stop) nor any other line with the store's error, and every WARN
// about the store was followed by its "reachable again". It returns, per outage a replica saw, how long and how many failures.
func checkOutageLog(t *testing.T, f *fleet) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.all {
		l.mu.Lock()
		warns, errs, waited := l.seen["store unreachable"], l.storeErrs, l.seen[startWait]
		for _, line := range l.outages {
			if m := reachableAgain.FindStringSubmatch(line); m != nil {
				out = append(out, m[1]+"/"+m[2])
			}
		}
		again := len(l.outages)
		l.mu.Unlock()
		if errs > 0 {
			t.Errorf("a replica logged %d lines with the unreachable store's error besides its WARN, want none (one WARN per outage, not one per statement); last lines:\n%s", errs, l)
		}
		if waited != 1 {
			t.Errorf("a replica logged %d WARNs that it waits for the store at its start, want 1 (the replicas start while the server is down)", waited)
		}
		if warns > 3 {
			t.Errorf("a replica logged %d \"store unreachable\" WARNs for three outages (at its start, the restart, the stop), want one per outage", warns)
		}
		if warns > again {
			t.Errorf("a replica logged %d \"store unreachable\" WARNs and %d \"store reachable again\"", warns, again)
		}
	}
	return out
}

// cpu returns the CPU time (user and system) each replica's current process has used.
func (f *fleet) cpu() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Duration, len(f.procs))
	for i, p := range f.procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis; utime and stime are the 12th
		// and 13th of them, in clock ticks (100 a second on Linux).
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		s, _ := strconv.ParseInt(fields[12], 10, 64)
		out[i] = time.Duration(u+s) * 10 * time.Millisecond
	}
	return out
}

// drainOutage waits for the feed of an outage test, then (3 minutes at most) for every
// recording to be transcribed, accepted and exported, stops the fleet and reports its problems
// and any recording missing; it returns the store, closed when the test ends.
func drainOutage(t *testing.T, rig *replicaRig, f *fleet, fed <-chan error) *postgres.Store {
	t.Helper()
	if err := <-fed; err != nil {
		t.Fatalf("feed the inbox: %v", err)
	}
	store, err := postgres.Open(context.Background(), rig.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	completed, exported := rig.waitDrained(t, store, outageFiles, time.Now().Add(3*time.Minute))
	f.stop(30 * time.Second)
	for _, p := range f.problems() {
		t.Errorf("%s", p)
	}
	if completed != outageFiles || exported != outageFiles {
		t.Errorf("transcription.completed accepted for %d and exported for %d of %d recordings; last lines of the replicas:\n%s",
			completed, exported, outageFiles, f.tails())
	}
	return store
}

// checkChargedOnce: one transcription per recording upstream, and the balance charged for
// each once.
func checkChargedOnce(t *testing.T, rig *replicaRig) {
	t.Helper()
	charged := checkOneTranscriptionEach(t, rig.sb, outageFiles)
	if ws := rig.sb.Workspace(t, sandboxtest.WorkspaceID); math.Abs(ws.AvailableMinutes-(replicaBudget-charged)) > 1e-6 {
		t.Errorf("balance %v, want %v: minutes charged more than once", ws.AvailableMinutes, replicaBudget-charged)
	}
}
