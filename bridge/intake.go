package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/media"
	"github.com/transcript-bridge/bridge/mapping"
)

// Scan lists a source from its stored cursor and stores a job per new recording, moving the
// cursor in the same transaction. A source that lists in pages (connectors.PageLister) is
// stored a page at a time, each page with its cursor in one transaction, so a scan holds one
// page in memory and one that stops midway keeps what it stored. It returns how many jobs it
// created (on error, before the error). Of several replicas, one at a time scans a source (the
// lease source:<name>); the others return 0 at once. A scan whose lease is lost midway (this
// replica was paused past it) ends; a cursor it still writes is harmless: a recording is
// stored once whatever the cursor says.
func (p *Pipeline) Scan(ctx context.Context, source string) (int, error) {
	var n int
	_, err := p.scanWith(ctx, source, &n)
	return n, err
}

// scanOnce is Scan reporting whether it ran (false: another replica holds the source's lease).
func (p *Pipeline) scanOnce(ctx context.Context, source string) (bool, error) {
	var n int
	return p.scanWith(ctx, source, &n)
}

// scanWith is Scan under the source's lease, counting what it added in n.
func (p *Pipeline) scanWith(ctx context.Context, source string, n *int) (bool, error) {
	p.setDefaults()
	sc := p.Sources[source]
	if sc == nil {
		return false, fmt.Errorf("scan: unknown source %q", source)
	}
	return p.withLease(ctx, sourceLease(source), func(ctx context.Context) error {
		var err error
		*n, err = p.scan(ctx, source, sc)
		return err
	})
}

// scan is Scan under the source's lease.
func (p *Pipeline) scan(ctx context.Context, source string, sc *SourceConfig) (int, error) {
	cursor, err := p.Store.Cursor(ctx, source)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", source, err)
	}
	n := 0
	store := func(recs []connectors.Recording, next string) error {
		added, err := p.Store.AddRecordings(ctx, source, recs, next, p.now())
		if err != nil {
			return fmt.Errorf("store %d recordings: %w", len(recs), err)
		}
		for _, j := range added {
			p.log().Info("found", p.jobAttrs(&j, "size", j.Size)...)
		}
		traceDiscovered(ctx, added)
		p.discovered(source, added)
		n += len(added)
		return nil
	}
	if pl, ok := sc.Source.(connectors.PageLister); ok {
		err = pl.ListPages(ctx, cursor, store)
	} else {
		var recs []connectors.Recording
		var next string
		if recs, next, err = sc.Source.List(ctx, cursor); err == nil {
			err = store(recs, next)
		}
	}
	if err != nil {
		return n, fmt.Errorf("scan %s: %w", source, err)
	}
	p.metrics().Scanned(source, p.now())
	return n, nil
}

// MapDiscovered resolves author, external id and metadata of discovered jobs (→ ready), or
// skips those the service would refuse, with the reason and without a request.
func (p *Pipeline) MapDiscovered(ctx context.Context) error {
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateDiscovered}, Limit: 500})
	if err != nil {
		return err
	}
	due := p.now()
	if !p.remapped.Load() { // at start, every unmapped job: bindings may have changed meanwhile
		due = time.Time{}
	}
	held, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateHeld}, DueBefore: due, Limit: 500})
	if err != nil {
		return err
	}
	for _, j := range held {
		if Unmapped(&j) {
			jobs = append(jobs, j)
		}
	}
	atStart := !p.remapped.Swap(true)
	for i := range jobs {
		j := &jobs[i]
		sc := p.Sources[j.Source]
		if sc == nil {
			continue // a source removed from the config: leave its jobs alone
		}
		from := j.State
		reason := precheck(j)
		if reason == "" && (from == StateDiscovered || atStart) {
			// What the file is, before who owns it: a file the service cannot take is skipped
			// now, never held for an author (jobs held before this check get it once per start).
			reason = p.inspect(ctx, sc, j)
		}
		if reason != "" {
			if err := p.skip(ctx, j, reason); err != nil {
				return err
			}
			continue
		}
		res, err := sc.Mapper.Map(ctx, mapping.Input{Recording: j.Recording, JobID: j.ID, Author: j.Author})
		switch {
		case errors.Is(err, mapping.ErrNotReady):
			p.log().Warn("mapping waits", p.jobAttrs(j, "error", err)...)
			continue
		case errors.Is(err, mapping.ErrUnmapped):
			reason := unmappedReason(err)
			if from == StateHeld && j.Reason == reason {
				j.NextAt = p.now().Add(remapInterval) // still no match: look again later, quietly
				err = p.move(ctx, j, StateHeld, "")
			} else {
				j.NextAt = p.now().Add(remapInterval)
				err = p.hold(ctx, j, HoldUnmapped, reason, NewEvent(EventHeld, j, map[string]any{"reason": reason}))
			}
			if err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
			continue
		case err != nil:
			if err := p.skip(ctx, j, err.Error()); err != nil {
				return err
			}
			continue
		}
		if gone, err := p.forgottenExternalID(ctx, res.ExternalID); err != nil {
			return err
		} else if gone {
			if err := p.skip(ctx, j, ReasonForgotten+": its external id was forgotten (bridge forget)"); err != nil {
				return err
			}
			continue
		}
		j.Author, j.ExternalID, j.Metadata = res.Author, res.ExternalID, res.Metadata
		j.NextAt = time.Time{}
		if err := p.move(ctx, j, StateReady, ""); err != nil && !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return nil
}

// ReasonForgotten begins the reason of a job skipped because a tombstone names it (bridge
// forget): it is never uploaded.
const ReasonForgotten = "forgotten"

// forgottenExternalID reports whether a tombstone holds external id x (never, when the store
// keeps no tombstones or x is empty). A store also leaves tombstoned source items and dedupe
// keys out when it adds recordings.
func (p *Pipeline) forgottenExternalID(ctx context.Context, x string) (bool, error) {
	ps, ok := p.Store.(PrivacyStore)
	if !ok || x == "" {
		return false, nil
	}
	gone, err := ps.Tombstoned(ctx, TombstoneQuery{ExternalID: x})
	if err != nil {
		return false, fmt.Errorf("tombstone of external id %q: %w", x, err)
	}
	return gone, nil
}

// ReasonUnmapped begins the reason of a job held because no member matches its owner.
const ReasonUnmapped = "unmapped"

// unmappedReason is the held reason for a mapper's mapping.ErrUnmapped error:
// "unmapped: <why>", once (the error's own text already begins so when it wraps
// mapping.ErrUnmapped first).
func unmappedReason(err error) string {
	if msg := err.Error(); strings.HasPrefix(msg, ReasonUnmapped+":") {
		return msg
	}
	return ReasonUnmapped + ": " + err.Error()
}

// remapInterval is how often held, unmapped jobs are mapped again (new bindings, a changed map).
const remapInterval = time.Minute

// Unmapped reports whether j waits for its owner to be mapped.
func Unmapped(j *Job) bool {
	return j.State == StateHeld && j.Hold == HoldUnmapped
}

// precheck returns why the service would refuse the file ("" when it would take it).
func precheck(j *Job) string { return Precheck(j.Recording) }

// Precheck returns why a recording cannot be taken by what the source says of it (Unavailable)
// or why the service would refuse it by its name and size alone (unsupported extension, too
// small, too large), the reason a job for it is skipped before any byte is sent; "" when it
// would take it. Content is checked later, from the first bytes read.
func Precheck(r connectors.Recording) string {
	ext := media.Ext(r.Name)
	switch {
	case r.Unavailable != "":
		return r.Unavailable
	case media.Kind(ext) == "":
		return fmt.Sprintf("unsupported_file_format: extension %q is not an audio or video format the service takes", ext)
	case r.Size > 0 && r.Size < api.MinUploadBytes:
		return fmt.Sprintf("file_too_small: %d bytes, the service needs at least %d", r.Size, api.MinUploadBytes)
	case r.Size > api.MaxUploadBytes:
		return fmt.Sprintf("file_size_limit_exceeded: %d bytes, the service takes at most %d", r.Size, int64(api.MaxUploadBytes))
	}
	return ""
}

func (p *Pipeline) skip(ctx context.Context, j *Job, reason string) error {
	err := p.move(ctx, j, StateSkipped, reason, NewEvent(EventSkipped, j, map[string]any{"reason": reason}))
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// Intake stores recordings pushed by a source (a webhook) as jobs, keeping the source's
// cursor, and returns how many were new.
func (p *Pipeline) Intake(ctx context.Context, source string, recs []connectors.Recording) (int, error) {
	cursor, err := p.Store.Cursor(ctx, source)
	if err != nil {
		return 0, fmt.Errorf("intake %s: %w", source, err)
	}
	added, err := p.Store.AddRecordings(ctx, source, recs, cursor, p.now())
	if err != nil {
		return 0, fmt.Errorf("intake %s: %w", source, err)
	}
	for _, j := range added {
		p.log().Info("pushed", p.jobAttrs(&j, "size", j.Size)...)
	}
	traceDiscovered(ctx, added)
	p.discovered(source, added)
	return len(added), nil
}

// RemapHeld makes the source's unmapped held jobs due now, with a fresh member list: after
// bindings were added (identities apply), they need not wait for the next minute.
func (p *Pipeline) RemapHeld(ctx context.Context, source string) error {
	sc := p.Sources[source]
	if sc == nil {
		return fmt.Errorf("remap: unknown source %q", source)
	}
	if r, ok := sc.Mapper.(Refresher); ok {
		r.Refresh()
	}
	held, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateHeld}, Source: source})
	if err != nil {
		return err
	}
	for i := range held {
		j := &held[i]
		if !Unmapped(j) {
			continue
		}
		j.NextAt = time.Time{}
		if err := p.move(ctx, j, StateHeld, ""); err != nil && !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return nil
}

// Reloader is implemented by mappers that read a file which may change while the bridge runs
// (mapping.map_file).
type Reloader interface {
	// Reload reads the file again; changed reports that its entries changed. On error the
	// entries read before stay in force.
	Reload() (changed bool, err error)
}

// mappingWatch is what CheckMapping saw last.
type mappingWatch struct {
	mu         sync.Mutex
	started    bool
	generation int64
}

// CheckMapping notices mapping changes made since its last call, by this process or any other
// on the store: a new mapping generation (identities apply, jobs release, see
// Store.NoteMappingChange) concerns every source, a changed map file (Reloader) its own. The
// unmapped held jobs of those sources are then due at once, with a fresh member list and the
// new map (RemapHeld), so the next step maps them. The first call only notes the generation:
// the first step maps every unmapped job again anyway. Run calls it every
// RunOptions.MappingInterval; it is cheap (one row read, the map files read and hashed).
func (p *Pipeline) CheckMapping(ctx context.Context) error {
	p.watch.mu.Lock()
	defer p.watch.mu.Unlock()
	ch, err := p.Store.LastMappingChange(ctx)
	if err != nil {
		return fmt.Errorf("check mapping: %w", err)
	}
	names := make([]string, 0, len(p.Sources))
	for name := range p.Sources {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []error
	var remap []string
	moved := p.watch.started && ch.Generation != p.watch.generation
	for _, name := range names {
		r, ok := p.Sources[name].Mapper.(Reloader)
		if !ok {
			continue
		}
		changed, err := r.Reload()
		if err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", name, err))
		}
		if changed {
			p.log().Info("map file changed: held jobs are mapped again", "source", name)
			remap = append(remap, name)
		}
	}
	if moved {
		p.log().Info("mapping changed: held jobs are mapped again", "generation", ch.Generation, "reason", ch.Reason, "at", ch.At)
		remap = names
	}
	for _, name := range slices.Compact(remap) {
		if err := p.RemapHeld(ctx, name); err != nil {
			return errors.Join(append(errs, fmt.Errorf("check mapping: %w", err))...) // the generation is seen again next time
		}
	}
	p.watch.started, p.watch.generation = true, ch.Generation
	return errors.Join(errs...)
}
