package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

// CronLogger makes l robfig/cron's logger, instead of its default that prints to stdout past
// the log level, format and redaction: a panic recovered in a scheduled job is logged at ERROR
// with its stack, a run skipped because the previous one still runs at DEBUG.
func CronLogger(l *slog.Logger) cron.Logger { return cronLogger{l} }

type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, keysAndValues ...any) {
	c.l.Debug("cron: "+msg, keysAndValues...)
}

func (c cronLogger) Error(err error, msg string, keysAndValues ...any) {
	c.l.Error("cron: "+msg, append(keysAndValues, "error", err)...)
}

// RunOptions configure Run.
type RunOptions struct {
	// Schedules maps each source name to its cron spec ("@every 10s", "*/5 * * * *").
	Schedules map[string]string
	// StepInterval is how often uploads start and events drain (default 1 s).
	StepInterval time.Duration
	// PollInterval is how often the tracker lists (default 5 s, the reference's advice).
	PollInterval time.Duration
	// MappingInterval is how often CheckMapping looks for mapping changes made elsewhere (the
	// store's mapping generation, the map files), so held jobs move within seconds of
	// identities apply or a map edit (default 5 s).
	MappingInterval time.Duration
	// Once scans every source, processes until every job is done, skipped, failed or held, and
	// returns (for cron and tests).
	Once bool
	// KeepAlive, when set, has Run ask the API for the workspace (GET /workspace) whenever it has
	// not answered for that long: an idle bridge calls nothing else, and readiness checks read
	// when the API last answered (see api.Client.LastAnswer) rather than ask it themselves
	// (default 0: never).
	KeepAlive time.Duration
}

// ParseSchedule checks a cron spec (standard five fields or descriptors like "@every 10s").
func ParseSchedule(spec string) error {
	_, err := cron.ParseStandard(spec)
	return err
}

// Run scans the sources on their schedules and steps the pipeline until ctx ends (or, with
// Once, until nothing can move), looking for mapping changes made elsewhere (CheckMapping)
// between steps. Without Once the tracker polls beside the steps (trackAside), so a poll that
// waits for the key's budget never holds up the next uploads. Uploads in flight and a poll
// under way are awaited before it returns; a job cut short stays in uploading with its key
// and is resumed on the next start.
func (p *Pipeline) Run(ctx context.Context, o RunOptions) error {
	p.setDefaults()
	if o.StepInterval == 0 {
		o.StepInterval = time.Second
	}
	if o.PollInterval == 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.MappingInterval == 0 {
		o.MappingInterval = 5 * time.Second
	}
	var uploads sync.WaitGroup
	defer uploads.Wait()
	defer p.resign(trackerLease) // another replica tracks at once
	var polls sync.WaitGroup
	var polling atomic.Bool
	defer polls.Wait() // before the lease is given up
	if !o.Once {
		cl := CronLogger(p.log())
		c := cron.New(cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
		for name, spec := range o.Schedules {
			if _, err := c.AddFunc(spec, func() { p.scanLogged(ctx, name) }); err != nil {
				return fmt.Errorf("source %s: schedule %q: %w", name, spec, err)
			}
		}
		for name := range p.Sources {
			p.scanLogged(ctx, name) // once at start, then on schedule
		}
		c.Start()
		defer func() { <-c.Stop().Done() }()
	}
	lastPoll, lastMapping := time.Time{}, time.Time{}
	for {
		if o.Once {
			for name := range p.Sources {
				p.scanLogged(ctx, name)
			}
		}
		if time.Since(lastMapping) >= o.MappingInterval {
			lastMapping = time.Now()
			if err := p.CheckMapping(ctx); err != nil && ctx.Err() == nil && !p.noSpace(err) {
				p.log().Error("mapping", "error", err)
			}
		}
		track := time.Since(lastPoll) >= o.PollInterval
		if track {
			lastPoll = time.Now()
		}
		if o.KeepAlive > 0 {
			p.keepAlive(ctx, &uploads, o.KeepAlive)
		}
		if track && !o.Once {
			p.trackAside(ctx, &polls, &polling)
			track = false
		}
		if err := p.Step(ctx, &uploads, track); err != nil && ctx.Err() == nil {
			p.stepFailed(err)
		}
		if o.Once {
			done, err := p.settled(ctx)
			if err != nil {
				return err
			}
			if done {
				uploads.Wait()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil
			}
			return ctx.Err()
		case <-time.After(o.StepInterval):
		}
	}
}

// trackAside polls in a goroutine of its own (awaited through wg), unless the previous poll still
// runs (busy): what Step does when asked to track, while the steps go on starting uploads. A
// poll's requests wait for the key's budget behind the uploads' (api.Client's limiter), and
// held inside a step they would leave the upload slots that free meanwhile empty until it ends.
func (p *Pipeline) trackAside(ctx context.Context, wg *sync.WaitGroup, busy *atomic.Bool) {
	if !busy.CompareAndSwap(false, true) {
		return
	}
	wg.Go(func() {
		defer busy.Store(false)
		if !p.lead(ctx, trackerLease) {
			return
		}
		err := errors.Join(wrapStage("track", p.Track(ctx)), wrapStage("reports", p.SettleReports(ctx)))
		if err != nil && ctx.Err() == nil {
			p.stepFailed(err)
		}
	})
}

// wrapStage names the stage of a step that failed (nil stays nil).
func wrapStage(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// stepFailed logs what a step (or a poll beside the steps) failed with: nothing for a full
// disk (logged once per outage; every step and scan tries again, and the first write that goes
// through ends it: spaceAgain), a WARN while the API cannot be reached (waited out: every step
// tries again, each call first retrying for a few seconds), an ERROR otherwise.
func (p *Pipeline) stepFailed(err error) {
	switch {
	case p.noSpace(err):
	case errors.Is(err, api.ErrUnreachable):
		p.log().Warn("the API cannot be reached; jobs wait and the bridge keeps trying", "error", err)
	default:
		p.log().Error("step", "error", err)
	}
}

// settled reports whether nothing can move: no source has items waiting to become ready
// (connectors.Pending), no upload runs, and every job is done, skipped, failed or held.
func (p *Pipeline) settled(ctx context.Context) (bool, error) {
	for _, sc := range p.Sources {
		if ps, ok := sc.Source.(connectors.Pending); ok && ps.Pending() > 0 {
			return false, nil
		}
	}
	p.mu.Lock()
	running := len(p.inFlight)
	p.mu.Unlock()
	if running > 0 {
		return false, nil
	}
	n, err := p.Active(ctx)
	return n == 0, err
}

// scanLogged scans source name and notes the outcome in the source's health (noteScan), which
// logs an outage once at its start and once at its end.
func (p *Pipeline) scanLogged(ctx context.Context, name string) {
	ran, err := p.scanOnce(ctx, name)
	if ctx.Err() != nil || (!ran && err == nil) {
		return // stopping, or another replica holds the source's lease (or the store's disk is full: lead)
	}
	if p.noSpace(err) {
		return // the store's disk, not the source: logged once per outage (DiskFull)
	}
	p.noteScan(name, err)
}

// answerer is an API client that knows when the API last answered (*api.Client).
type answerer interface {
	LastAnswer() time.Time
}

// keepAlive asks the API for the workspace, in the background (at most once per every, awaited
// through wg), when neither it nor anything else got an answer within every: see
// RunOptions.KeepAlive. A failure is logged at DEBUG: the steps' own calls say more.
func (p *Pipeline) keepAlive(ctx context.Context, wg *sync.WaitGroup, every time.Duration) {
	p.mu.Lock()
	last := p.lastKeepAlive
	if a, ok := p.API.(answerer); ok && a.LastAnswer().After(last) {
		last = a.LastAnswer()
	}
	if time.Since(last) < every {
		p.mu.Unlock()
		return
	}
	p.lastKeepAlive = time.Now()
	p.mu.Unlock()
	wg.Go(func() {
		if _, err := p.API.Workspace(ctx); err != nil && ctx.Err() == nil {
			p.log().Debug("keep-alive: the API did not answer", "error", err)
		}
	})
}
