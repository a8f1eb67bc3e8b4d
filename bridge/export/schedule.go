package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/transcript-bridge/bridge/bridge"
)

// ErrBusy is returned when another runner holds the (export, tick).
var ErrBusy = errors.New("another runner has this export's tick")

// RunTick performs c's scheduled run at tick over [checkpoint, tick).
func (e *Exporter) RunTick(ctx context.Context, c *Config, tick time.Time) (*Manifest, error) {
	return e.RunWindow(ctx, c, tick, Window{}, false)
}

// RunWindow performs a run of c for tick over w (zero: from the checkpoint, else since, else a
// day before, until tick). It claims (export, tick) first, so one runner does it across
// replicas, and moves the checkpoint only after the destination holds the whole run, when the
// window continues it. A dry run only lists.
func (e *Exporter) RunWindow(ctx context.Context, c *Config, tick time.Time, w Window, dry bool) (*Manifest, error) {
	cp, hasCP, err := e.Store.Checkpoint(ctx, c.Name)
	if err != nil {
		return nil, err
	}
	if w.From.IsZero() {
		switch {
		case hasCP:
			w.From = cp
		case !c.since.IsZero():
			w.From = c.since
		default:
			w.From = tick.Add(-24 * time.Hour)
		}
	}
	if w.Until.IsZero() {
		w.Until = tick
	}
	if !w.From.Before(w.Until) {
		return nil, fmt.Errorf("export %s: empty window %s..%s", c.Name, w.From.Format(time.RFC3339), w.Until.Format(time.RFC3339))
	}
	if dry {
		items, err := e.List(ctx, c, w)
		if err != nil {
			return nil, err
		}
		return &Manifest{Export: c.Name, Tick: tick, Window: w, Format: c.Format, Layout: c.Layout, Counts: Counts{Listed: len(items)}}, nil
	}
	lease := e.Lease
	if lease == 0 {
		lease = 10 * time.Minute
	}
	claimed := e.now()
	ok, err := e.Store.ClaimRun(ctx, c.Name, tick, claimed, lease)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	// LeaseUntil is this runner's claim: renewed as it writes, checked when it finishes, so a
	// runner paused past its lease finishes nothing another one took over.
	run := bridge.ExportRun{Export: c.Name, Tick: tick, From: w.From, Until: w.Until, StartedAt: claimed, LeaseUntil: claimed.Add(lease)}
	m, err := e.write(ctx, c, tick, w, &run, lease)
	run.FinishedAt = e.now()
	var advanceTo time.Time
	var ids []string
	if err == nil && (!hasCP || !w.From.After(cp) && w.Until.After(cp)) {
		if advanceTo, err = e.Settled(ctx, c, w); err != nil {
			m = nil
		}
	}
	if m != nil {
		for _, t := range m.Transcripts {
			ids = append(ids, t.ID)
		}
	}
	data := map[string]any{"export": c.Name, "tick": tick, "window": w, "location": run.Location}
	ev := bridge.Event{Type: bridge.EventExportCompleted}
	if err != nil {
		run.Status, run.Error, ev.Type = bridge.ExportFailed, err.Error(), bridge.EventExportFailed
		data["error"] = err.Error()
	} else {
		run.Status = bridge.ExportCompleted
		run.Listed, run.Exported, run.Skipped = m.Counts.Listed, m.Counts.Exported, m.Counts.Skipped
		data["counts"], data["manifest"] = m.Counts, ManifestName
	}
	ev.Data, _ = json.Marshal(data)
	if ferr := e.Store.FinishRun(context.WithoutCancel(ctx), run, ids, advanceTo, ev); ferr != nil {
		return m, errors.Join(err, ferr)
	}
	e.observe(c.Name, string(run.Status))
	return m, err
}

func (e *Exporter) write(ctx context.Context, c *Config, tick time.Time, w Window, run *bridge.ExportRun, lease time.Duration) (*Manifest, error) {
	items, err := e.List(ctx, c, w)
	if err != nil {
		return nil, err
	}
	loc, err := c.where(tick)
	if err != nil {
		return nil, err
	}
	run.Location = loc
	dest, err := Open(ctx, c, loc)
	if err != nil {
		return nil, err
	}
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	renew := func() {
		until := e.now().Add(lease)
		err := e.Store.RenewRun(ctx, c.Name, tick, run.LeaseUntil, until)
		switch {
		case err == nil:
			run.LeaseUntil = until
		case errors.Is(err, bridge.ErrConflict):
			lost(err) // another runner took the tick over: stop writing
		default:
			e.log().Warn("export renew", "export", c.Name, "err", err)
		}
	}
	m, err := e.Write(ctx, c, tick, w, items, dest, renew)
	if cause := context.Cause(ctx); errors.Is(cause, bridge.ErrConflict) {
		return nil, cause
	}
	if err != nil {
		return nil, err
	}
	if err := dest.Prune(ctx, c.Name, c.Keep); err != nil {
		e.log().Warn("export prune", "export", c.Name, "err", err)
	}
	return m, nil
}

// LatestTick returns c's last scheduled tick at or before now, after from (zero when none).
func LatestTick(c *Config, from, now time.Time) time.Time {
	var last time.Time
	for t := c.Next(from); !t.IsZero() && !t.After(now); t = c.Next(t) {
		last = t
	}
	return last
}

// scheduledTick is the tick of a firing at t: its minute. Cron specs fire on the minute; the
// firings of an @every schedule, which each replica counts from its own start, share the tick
// of their minute, so every replica and a catch-up name the same one.
func scheduledTick(t time.Time) time.Time { return t.Truncate(time.Minute) }

// CatchUp runs, once each, the latest tick of every export that passed without a run while
// the bridge was down (not once per missed tick).
func (e *Exporter) CatchUp(ctx context.Context, exports []*Config) error {
	var errs []error
	for _, c := range exports {
		from, ok, err := e.Store.LastTick(ctx, c.Name)
		if err != nil {
			return err
		}
		if !ok {
			if cp, has, _ := e.Store.Checkpoint(ctx, c.Name); has {
				from = cp
			} else if !c.since.IsZero() {
				from = c.since
			} else {
				continue // never ran and no since: the schedule starts it
			}
		}
		// The tick the schedule's firing would run (see scheduledTick): an @every schedule's
		// own ticks fall between those, and a run at one would overlap the schedule's.
		tick := scheduledTick(LatestTick(c, from, e.now()))
		if !tick.After(from) {
			tick = time.Time{}
		}
		if tick.IsZero() && ok {
			// No tick passed since the last run; take that run over if it was cut short.
			if runs, err := e.Store.Runs(ctx, c.Name, 1); err == nil && len(runs) == 1 && runs[0].Status != bridge.ExportCompleted {
				tick = runs[0].Tick
			}
		}
		if tick.IsZero() {
			continue
		}
		e.log().Info("export catch-up", "export", c.Name, "tick", tick)
		if _, err := e.RunTick(ctx, c, tick); err != nil && !errors.Is(err, ErrBusy) {
			errs = append(errs, fmt.Errorf("export %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Schedule runs each export on its schedule (robfig/cron with Recover and SkipIfStillRunning)
// until the returned stop is called.
func (e *Exporter) Schedule(ctx context.Context, exports []*Config) (stop func(), err error) {
	cl := bridge.CronLogger(e.log())
	cr := cron.New(cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	for _, c := range exports {
		if _, err := cr.AddFunc(c.Schedule, func() {
			tick := scheduledTick(e.now())
			if _, err := e.RunTick(ctx, c, tick); err != nil && !errors.Is(err, ErrBusy) {
				e.log().Error("export", "export", c.Name, "tick", tick, "err", err)
			}
		}); err != nil {
			return nil, fmt.Errorf("export %s: schedule: %w", c.Name, err)
		}
	}
	cr.Start()
	return func() { <-cr.Stop().Done() }, nil
}
