package export

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// One run of an export at a time, across replicas: a run holds the store lease export:<name>
// from before it reads the checkpoint until after it is recorded, so no two runs (of two ticks)
// start from the same checkpoint and export the same transcripts. A heartbeat renews that lease
// and the claim of the run's tick together; a killed run's are taken over once they run out.

// scanRuns is how many of an export's latest runs a run looks through for one in progress or
// abandoned (each run cleans up the abandoned ones it finds, so they are the latest).
const scanRuns = 100

// exportLease names the store lease of export's run in progress.
func exportLease(export string) string { return "export:" + export }

// lease returns how long a run's claims last between renewals.
func (e *Exporter) lease() time.Duration {
	if e.Lease > 0 {
		return e.Lease
	}
	return bridge.DefaultLease
}

// holder names a run in the export lease: the replica and a suffix of the run's own (a
// catch-up and the schedule of one replica are two runs).
func (e *Exporter) holder() string {
	b := make([]byte, 4)
	rand.Read(b)
	if e.Replica != "" {
		return e.Replica + "/" + hex.EncodeToString(b)
	}
	return bridge.DefaultReplica() + "/" + hex.EncodeToString(b)
}

// runLease is what a run holds: the export's lease and, once claimed, its tick's run; a
// heartbeat renews both every third of ttl and, when another runner took either over, cancels
// ctx with an error wrapping bridge.ErrConflict.
type runLease struct {
	e      *Exporter
	export string
	holder string
	ttl    time.Duration
	ctx    context.Context // the run's: ends when a claim is lost
	lost   context.CancelCauseFunc
	done   chan struct{}
	beat   sync.WaitGroup
	once   sync.Once
	mu     sync.Mutex
	tick   time.Time // the claimed tick (zero before the claim)
	until  time.Time // the claimed run's lease: its ExportRun.LeaseUntil
}

// hold takes c's export lease for a run at tick once no other run of c is in progress: with
// wait it tries again until then (or ctx ends), else it returns ErrBusy. It then cleans up the
// runs their runners abandoned, returning that error when one cannot be.
func (e *Exporter) hold(ctx context.Context, c *Config, tick time.Time, wait bool) (*runLease, error) {
	l := &runLease{e: e, export: c.Name, holder: e.holder(), ttl: e.lease(), done: make(chan struct{})}
	poll := max(min(l.ttl/3, time.Second), 10*time.Millisecond)
	for waited := false; ; waited = true {
		abandoned, err := l.take(ctx, tick)
		if err == nil {
			l.start(ctx)
			for _, r := range abandoned {
				if err := e.supersede(l.ctx, c, r, tick, l.ttl); err != nil {
					l.release()
					return nil, err
				}
			}
			return l, nil
		}
		if !errors.Is(err, ErrBusy) || !wait {
			return nil, err
		}
		if !waited {
			e.log().Info("export waits for its run in progress", "export", c.Name)
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}

// take takes the export lease and returns the runs abandoned at ticks other than tick (running,
// their lease run out); ErrBusy, without the lease, when another holder has it or a run is
// running under a live lease (a runner that lost the export's lease only lately).
func (l *runLease) take(ctx context.Context, tick time.Time) ([]bridge.ExportRun, error) {
	ok, err := l.e.Store.Lease(ctx, exportLease(l.export), l.holder, l.e.now(), l.ttl)
	if err != nil || !ok {
		return nil, errors.Join(err, busy(ok))
	}
	runs, err := l.e.Store.Runs(ctx, l.export, scanRuns)
	now := l.e.now()
	var abandoned []bridge.ExportRun
	for _, r := range runs {
		switch {
		case err != nil || r.Status != bridge.ExportRunning:
		case !r.LeaseUntil.Before(now):
			err = ErrBusy
		case !r.Tick.Equal(tick): // tick's own is taken over by its claim, with its journal
			abandoned = append(abandoned, r)
		}
	}
	if err != nil {
		l.giveUp()
		return nil, err
	}
	return abandoned, nil
}

// busy is ErrBusy when a lease was not had.
func busy(had bool) error {
	if had {
		return nil
	}
	return ErrBusy
}

// start starts the heartbeat.
func (l *runLease) start(ctx context.Context) {
	l.ctx, l.lost = context.WithCancelCause(ctx)
	l.beat.Go(func() {
		t := time.NewTicker(l.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-l.ctx.Done():
				return
			case <-t.C:
				l.renew()
			}
		}
	})
}

// claimed makes the heartbeat renew the run of tick, claimed until until, too.
func (l *runLease) claimed(tick, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick, l.until = tick, until
}

// renew extends the claimed run's lease and the export's to now+ttl. When another runner took
// either over it cancels the run's context; other store errors are logged and tried again at
// the next beat.
func (l *runLease) renew() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.e.now()
	until := now.Add(l.ttl)
	if !l.tick.IsZero() {
		switch err := l.e.Store.RenewRun(l.ctx, l.export, l.tick, l.until, until); {
		case err == nil:
			l.until = until
		case errors.Is(err, bridge.ErrConflict):
			l.lost(err) // another runner took the tick over: stop writing
			return
		case l.ctx.Err() == nil:
			l.e.log().Warn("export renew", "export", l.export, "error", err)
		}
	}
	switch ok, err := l.e.Store.Lease(l.ctx, exportLease(l.export), l.holder, now, l.ttl); {
	case err != nil:
		if l.ctx.Err() == nil {
			l.e.log().Warn("export renew", "export", l.export, "error", err)
		}
	case !ok:
		l.lost(fmt.Errorf("export %s: its lease was taken over: %w", l.export, bridge.ErrConflict))
	}
}

// stop ends the heartbeat and returns the claimed run's lease, for FinishRun to check.
func (l *runLease) stop() time.Time {
	l.once.Do(func() {
		close(l.done)
		l.beat.Wait()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// release ends the heartbeat and gives the export's lease up, so the next run starts at once.
func (l *runLease) release() {
	l.stop()
	l.giveUp()
}

func (l *runLease) giveUp() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.e.Store.Release(ctx, exportLease(l.export), l.holder); err != nil {
		l.e.log().Warn("export release", "export", l.export, "error", err)
	}
}

// supersede cleans up after r, a run its runner abandoned (killed, or cut off before it was
// recorded), before the run of tick takes its window: it claims r (fencing its runner, should
// it resume), removes from r's destination what r's journal lists (no export's record: r never
// completed) and marks r failed. It returns the first error; r then stays abandoned, for the
// next run to clean up.
func (e *Exporter) supersede(ctx context.Context, c *Config, r bridge.ExportRun, tick time.Time, lease time.Duration) error {
	now := e.now()
	at := r.Tick.UTC().Format(time.RFC3339)
	ok, err := e.Store.ClaimRun(ctx, c.Name, r.Tick, now, lease)
	if err != nil || !ok { // !ok: another runner took it over, and cleans it up
		return err
	}
	loc, err := c.where(r.Tick)
	if err == nil {
		var dest Destination
		if dest, err = Open(ctx, c, loc); err == nil {
			err = discard(ctx, dest, c.Name, r.Tick)
		}
	}
	if err != nil {
		return fmt.Errorf("export %s: clean up the abandoned run of %s: %w", c.Name, at, err)
	}
	run := bridge.ExportRun{Export: c.Name, Tick: r.Tick, Status: bridge.ExportFailed, Location: loc, StartedAt: now,
		FinishedAt: e.now(), LeaseUntil: now.Add(lease),
		Error: fmt.Sprintf("abandoned: its runner stopped before recording it; superseded by tick %s", tick.UTC().Format(time.RFC3339))}
	data, _ := json.Marshal(map[string]any{"export": c.Name, "tick": r.Tick, "location": loc, "error": run.Error})
	ev := bridge.Event{Type: bridge.EventExportFailed, Data: data}
	if err := e.Store.FinishRun(context.WithoutCancel(ctx), run, nil, time.Time{}, ev); err != nil {
		return fmt.Errorf("export %s: clean up the abandoned run of %s: %w", c.Name, at, err)
	}
	e.log().Warn("export run abandoned; its files removed", "export", c.Name, "tick", r.Tick, "location", loc, "superseded_by", tick)
	e.observe(c.Name, string(run.Status))
	return nil
}
