package relay

import "time"

// Group-commit pacing. A commit costs per row and per page it touches: one of many rows costs
// less than one of few (the index pages, the log frames and the claims are shared). So while
// the lanes have work queued, the committer lets what gathers wait, up to maxHold, and writes
// it as one larger batch; it commits at once when a lane it would feed runs low (an event
// waiting to be fanned out to an idle endpoint is never held back), when the batch reaches
// maxBatch, and when stopping.
const (
	// maxHold is the longest the committer lets gathered work wait while the lanes are busy.
	maxHold = 10 * time.Millisecond
	// maxBatch is the most gathered items (records, fan-outs, releases) it lets wait.
	maxBatch = 2048
)

// gather notes, before an item is added (e.mu held), when the batch being gathered began, and
// that l (any of them) has work in it.
func (e *engine) gather(ls ...*lane) {
	if len(e.records)+len(e.fanOuts)+len(e.releases) == 0 {
		e.since = time.Now() // real time: a relay's test clock may stand still
	}
	for _, l := range ls {
		if l != nil {
			l.waiting++
		}
	}
}

// hold says how long the committer may let the gathered work wait for more: 0 to commit now.
// A lane runs low when less than a quarter of its capacity (deliveries) is queued; it calls for a commit
// only when the batch holds work of its own (its records free its room, its fan-outs feed it)
// or it has deliveries to claim.
func (e *engine) hold() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.records) + len(e.fanOuts) + len(e.releases)
	if n == 0 || n >= maxBatch || e.stopped {
		return 0
	}
	for _, l := range e.lanes {
		if (l.waiting > 0 || l.dirty) && 4*l.queued.Load() < int64(l.capacity) {
			return 0
		}
	}
	return max(0, maxHold-time.Since(e.since))
}

// commitBackoff is the committer's wait after a failed commit, the failures-th in a row: the
// longer the store stays down or busy, the longer the wait (100 ms doubling up to 2 s; the first
// success resets the count).
func commitBackoff(failures int) time.Duration {
	return min(100*time.Millisecond<<min(failures, 5), 2*time.Second)
}
