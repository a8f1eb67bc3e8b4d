package main

import (
	"context"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/internal/natstest"
)

// natsAway is how long TestBusOutage keeps the NATS server down.
const natsAway = 5 * time.Second

// TestBusOutage is issue 32's point 2: three replicas on PostgreSQL with the NATS bus, on a
// nats-server of the test's own (JetStream on disk), which is stopped mid-run for a few seconds
// and started again, and then restarted at once. Required: no replica exits, no event is lost
// (every job's transcription.uploaded and transcription.completed, as the store's outbox has
// them, is accepted by the receiver), none arrives twice with different webhook-ids, and the
// relay resumes: the test prints how long after the server's return the next delivery was
// accepted.
func TestBusOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the bridge as child processes and a nats-server")
	}
	ns := natstest.NewServer(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("bus outage seed %d (recordings %d)", seed, outageFiles)
	rig := newReplicaRigWith(t, rigOptions{bus: "nats", seed: seed, natsURL: ns.URL()})
	f := newFleet(t, rig.config, replicaCount)
	fed := rig.feed(outageFiles, outageFeed)

	awaitFleet(t, f, "the first completions", 2*time.Minute, func() bool { return rig.rx.completedCount() >= 3 })
	ns.Stop()
	time.Sleep(natsAway)
	calls := rig.rx.callCount()
	ns.Start()
	up := time.Now()
	var resumed time.Duration
	awaitFleet(t, f, "a delivery after NATS came back", 2*time.Minute, func() bool {
		if rig.rx.callCount() > calls {
			resumed = time.Since(up)
			return true
		}
		return false
	})
	before := rig.rx.completedCount()
	awaitFleet(t, f, "completions after NATS came back", 2*time.Minute, func() bool { return rig.rx.completedCount() >= before+3 })
	ns.Restart()
	calls, up = rig.rx.callCount(), time.Now()
	var resumedRestart time.Duration
	awaitFleet(t, f, "a delivery after the NATS restart", 2*time.Minute, func() bool {
		if rig.rx.callCount() > calls || rig.rx.completedCount() == outageFiles {
			resumedRestart = time.Since(up)
			return true
		}
		return false
	})

	store := drainOutage(t, rig, f, fed)
	checkEveryEventDelivered(t, store, rig.rx)
	checkChaosReceiver(t, rig.rx)
	checkChargedOnce(t, rig)
	uploads, attempts := checkStoreSettled(t, store, outageFiles)
	t.Logf("bus outage: the relay delivered again %s after NATS came back from %s away, and %s after a restart; "+
		"%d upload attempts, %d delivery attempts; log lines %v",
		resumed.Round(time.Millisecond), natsAway, resumedRestart.Round(time.Millisecond), uploads, attempts, f.logCounts())
}

// checkEveryEventDelivered: for every job in the store, the receiver accepted its
// transcription.uploaded and transcription.completed (the events the outbox holds for it).
func checkEveryEventDelivered(t *testing.T, store bridge.Store, rx *chaosReceiver) {
	t.Helper()
	jobs, err := store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, j := range jobs {
		for _, typ := range []string{bridge.EventUploaded, bridge.EventCompleted} {
			if len(rx.ids[j.ID+" "+typ]) == 0 {
				t.Errorf("job %s: %s never accepted: an event lost", j.ID, typ)
			}
		}
	}
}

// callCount is how many requests the receiver has had.
func (rx *chaosReceiver) callCount() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.calls
}
