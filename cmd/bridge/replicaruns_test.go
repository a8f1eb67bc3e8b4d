package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// replicasInFlight is how many runs of one bus replicaRuns has going at once: one killing
// replicas while the previous ones wait for their export (a run's last transcripts are
// exported by the tick of the minute after they complete: up to a minute after its kills, the
// run's replicas idle). A run's fleet holds 20-30 connections to PostgreSQL.
const replicasInFlight = 3

// replicaRuns runs TestReplicas n times on busDriver, on the PostgreSQL server of admin (see
// runReplicas): one run as it is, more as subtests run=01, run=02, … Their kills come one run
// after another (the next run starts when the previous one's kills and feed are over), while
// up to replicasInFlight runs wait for their exports together; then it prints each run's
// slowest completion.
func replicaRuns(t *testing.T, busDriver, admin string, n int) {
	if n <= 1 {
		runReplicas(t, busDriver, admin, func() {})
		return
	}
	slowest := make([]time.Duration, n)
	passed := make([]bool, n)
	slots := make(chan struct{}, replicasInFlight)
	killing := make(chan struct{}, 1) // held by the run whose kills are under way
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		killing <- struct{}{}
		wg.Add(1)
		go func() { // t.Run from goroutines: subtests at once, outside -parallel's count
			defer wg.Done()
			defer func() { <-slots }()
			passed[i] = t.Run(fmt.Sprintf("run=%02d", i+1), func(t *testing.T) {
				var once sync.Once
				killed := func() { once.Do(func() { <-killing }) }
				defer killed() // a run that fails early lets the next one start
				slowest[i] = runReplicas(t, busDriver, admin, killed)
			})
		}()
	}
	wg.Wait()
	t.Logf("replicas (bus %s): %s", busDriver, runsSummary(slowest, passed))
}

// runsSummary tells, for runs whose slowest completions and outcomes are given, how many passed,
// each one's slowest completion and the slowest of all.
func runsSummary(slowest []time.Duration, passed []bool) string {
	var b strings.Builder
	ok, worst := 0, 0
	for i, d := range slowest {
		if passed[i] {
			ok++
		}
		if d > slowest[worst] {
			worst = i
		}
	}
	fmt.Fprintf(&b, "%d of %d runs passed; slowest completion from transcription to accepted delivery per run:", ok, len(slowest))
	for i, d := range slowest {
		fmt.Fprintf(&b, " run=%02d %s", i+1, d.Round(time.Millisecond))
		if !passed[i] {
			b.WriteString(" (FAIL)")
		}
		if i < len(slowest)-1 {
			b.WriteString(",")
		}
	}
	fmt.Fprintf(&b, "; the slowest of all %s (run=%02d)", slowest[worst].Round(time.Millisecond), worst+1)
	return b.String()
}
