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

// ErrBusy is returned when another runner has the export (a run of it is in progress, across
// replicas) or this tick (done, or in progress).
var ErrBusy = errors.New("another runner has this export or tick")

// ErrEmptyWindow is returned, wrapped with the window, for a run that would cover nothing: the
// checkpoint is at or past its tick.
var ErrEmptyWindow = errors.New("empty window")

// RunTick performs c's scheduled run at tick over [checkpoint, tick): ErrBusy at once while
// another run of c is in progress (the next firing, or a catch-up, covers the window).
func (e *Exporter) RunTick(ctx context.Context, c *Config, tick time.Time) (*Manifest, error) {
	return e.run(ctx, c, tick, Window{}, false, false)
}

// RunWindow performs a run of c for tick over w (zero: from the checkpoint, else since, else a
// day before, until tick), waiting while another run of c is in progress (a killed one's claims
// run out after Lease). A dry run only lists. See run.
func (e *Exporter) RunWindow(ctx context.Context, c *Config, tick time.Time, w Window, dry bool) (*Manifest, error) {
	return e.run(ctx, c, tick, w, dry, true)
}

// run performs a run: it holds the export's lease (one run of an export at a time across
// replicas: hold, which also cleans up runs abandoned before), only then reads the checkpoint,
// claims (export, tick), and moves the checkpoint only after the destination holds the whole
// run, when the window continues it. It returns the manifest, or the first error: ErrBusy,
// ErrEmptyWindow (wrapped), or why the run failed, with the run then recorded as failed.
func (e *Exporter) run(ctx context.Context, c *Config, tick time.Time, w Window, dry, wait bool) (*Manifest, error) {
	if dry {
		w, _, err := e.window(ctx, c, tick, w)
		if err != nil {
			return nil, err
		}
		items, err := e.List(ctx, c, w)
		if err != nil {
			return nil, err
		}
		return &Manifest{Export: c.Name, Tick: tick, Window: w, Format: c.Format, Layout: c.Layout, Counts: Counts{Listed: len(items)}}, nil
	}
	if _, _, err := e.window(ctx, c, tick, w); err != nil {
		return nil, err // no lease needed to see it: the checkpoint only moves on
	}
	l, err := e.hold(ctx, c, tick, wait)
	if err != nil {
		return nil, err
	}
	defer l.release()
	ctx = l.ctx
	w, continues, err := e.window(ctx, c, tick, w) // no other run moves it now
	if err != nil {
		return nil, err
	}
	claimed := e.now()
	ok, err := e.Store.ClaimRun(ctx, c.Name, tick, claimed, l.ttl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	l.claimed(tick, claimed.Add(l.ttl))
	run := bridge.ExportRun{Export: c.Name, Tick: tick, From: w.From, Until: w.Until, StartedAt: claimed}
	var advanceTo time.Time
	if continues { // before listing: a transcription completing after this is taken now or later
		advanceTo, err = e.Settled(ctx, c, w)
	}
	var m *Manifest
	var dest Destination
	if err == nil {
		m, dest, err = e.write(ctx, c, tick, w, &run, l.renew)
	}
	// LeaseUntil is this runner's claim: renewed as it runs, checked when it finishes, so a
	// runner paused past its lease finishes nothing another one took over.
	run.LeaseUntil = l.stop()
	run.FinishedAt = e.now()
	return e.finish(ctx, c, run, m, dest, advanceTo, err)
}

// window returns w with its zero ends filled in for a run of c at tick, and whether the run
// continues the checkpoint (may move it); ErrEmptyWindow (wrapped) when w covers nothing.
func (e *Exporter) window(ctx context.Context, c *Config, tick time.Time, w Window) (Window, bool, error) {
	cp, hasCP, err := e.Store.Checkpoint(ctx, c.Name)
	if err != nil {
		return w, false, err
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
		return w, false, fmt.Errorf("export %s: %w %s..%s", c.Name, ErrEmptyWindow, w.From.Format(time.RFC3339), w.Until.Format(time.RFC3339))
	}
	return w, !hasCP || !w.From.After(cp) && w.Until.After(cp), nil
}

// finish records run (completed with m, or failed with err), moving the checkpoint to
// advanceTo when it completed, then drops its journal from dest: the files stay the export's
// record only once the run is. It returns m and err, joined with FinishRun's error.
func (e *Exporter) finish(ctx context.Context, c *Config, run bridge.ExportRun, m *Manifest, dest Destination, advanceTo time.Time, err error) (*Manifest, error) {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, bridge.ErrConflict) {
		err = cause // another runner took the run or the export over: it decides
	}
	var ids []string
	data := map[string]any{"export": c.Name, "tick": run.Tick, "window": Window{From: run.From, Until: run.Until}, "location": run.Location}
	ev := bridge.Event{Type: bridge.EventExportCompleted}
	if err != nil {
		run.Status, run.Error, ev.Type = bridge.ExportFailed, err.Error(), bridge.EventExportFailed
		data["error"] = err.Error()
		m, advanceTo = nil, time.Time{}
	} else {
		run.Status = bridge.ExportCompleted
		run.Listed, run.Exported, run.Skipped = m.Counts.Listed, m.Counts.Exported, m.Counts.Skipped
		data["counts"], data["manifest"] = m.Counts, ManifestName
		for _, t := range m.Transcripts {
			ids = append(ids, t.ID)
		}
	}
	ev.Data, _ = json.Marshal(data)
	ctx = context.WithoutCancel(ctx)
	if ferr := e.Store.FinishRun(ctx, run, ids, advanceTo, ev); ferr != nil {
		return m, errors.Join(err, ferr) // the journal stays: the next run cleans up, unless this one was recorded
	}
	e.observe(c.Name, string(run.Status))
	if dest != nil {
		if derr := dropJournal(ctx, dest, c.Name, run.Tick); derr != nil {
			e.log().Warn("export journal", "export", c.Name, "error", derr)
		}
	}
	return m, err
}

// write lists w and writes it to the run's destination, returning the manifest and the
// destination. When it fails but still holds the run, it removes what it wrote.
func (e *Exporter) write(ctx context.Context, c *Config, tick time.Time, w Window, run *bridge.ExportRun, renew func()) (*Manifest, Destination, error) {
	items, err := e.List(ctx, c, w)
	if err != nil {
		return nil, nil, err
	}
	loc, err := c.where(tick)
	if err != nil {
		return nil, nil, err
	}
	run.Location = loc
	dest, err := Open(ctx, c, loc)
	if err != nil {
		return nil, nil, err
	}
	m, err := e.Write(ctx, c, tick, w, items, dest, renew)
	if cause := context.Cause(ctx); errors.Is(cause, bridge.ErrConflict) {
		return nil, nil, cause // another runner took the run over: its files are its business now
	}
	if err != nil {
		if derr := discard(context.WithoutCancel(ctx), dest, c.Name, tick); derr != nil {
			e.log().Warn("export discard", "export", c.Name, "error", derr)
		}
		return nil, nil, err
	}
	if err := dest.Prune(ctx, c.Name, c.Keep); err != nil {
		e.log().Warn("export prune", "export", c.Name, "error", err)
	}
	return m, dest, nil
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
		if _, err := e.RunTick(ctx, c, tick); err != nil && !skipped(err) {
			errs = append(errs, fmt.Errorf("export %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// skipped reports whether err is a firing's no-op: another runner has the export or tick, or
// nothing is left to export before the tick (a schedule under a minute, after its minute's run).
func skipped(err error) bool { return errors.Is(err, ErrBusy) || errors.Is(err, ErrEmptyWindow) }

// Schedule runs each export on its schedule (robfig/cron with Recover and SkipIfStillRunning)
// until the returned stop is called.
func (e *Exporter) Schedule(ctx context.Context, exports []*Config) (stop func(), err error) {
	cl := bridge.CronLogger(e.log())
	cr := cron.New(cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	for _, c := range exports {
		if _, err := cr.AddFunc(c.Schedule, func() {
			tick := scheduledTick(e.now())
			switch _, err := e.RunTick(ctx, c, tick); {
			case skipped(err):
				e.log().Debug("export skipped", "export", c.Name, "tick", tick, "reason", err)
			case err != nil:
				e.log().Error("export", "export", c.Name, "tick", tick, "error", err)
			}
		}); err != nil {
			return nil, fmt.Errorf("export %s: schedule: %w", c.Name, err)
		}
	}
	cr.Start()
	return func() { <-cr.Stop().Done() }, nil
}
