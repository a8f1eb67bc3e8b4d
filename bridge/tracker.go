package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/failpoint"
)

// Track learns what happened to queued and processing jobs from the list endpoint, filtered by
// status, creation date and this installation's bridge_instance metadata, and GETs only the
// transcriptions that reached a final status. Queued transcriptions, which grow with the backlog,
// are listed only every 10 minutes (to notice deletions upstream); a poll otherwise costs one list
// per status and page of processing (bounded by the plan's concurrency) and finished
// transcriptions, whatever the number waiting. While other requests queue for the key's data
// budget (a backfill's uploads), it yields to them: see trackAllowance.
func (p *Pipeline) Track(ctx context.Context) error {
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateQueued, StateProcessing}})
	if err != nil || len(jobs) == 0 {
		return err
	}
	allowance, poll := p.trackAllowance()
	if !poll {
		return nil
	}
	ctx = api.Background(ctx)
	byTranscription := map[string]*Job{}
	from := p.now()
	for i := range jobs {
		byTranscription[jobs[i].TranscriptionID] = &jobs[i]
		if jobs[i].AttemptAt.Before(from) {
			from = jobs[i].AttemptAt
		}
	}
	from = from.Add(-24 * time.Hour) // dates are UTC days; a day of slack covers clock skew
	p.mu.Lock()
	fullPass := allowance < 0 && p.now().Sub(p.lastFullPass) >= goneCheck // postponed while contended
	p.mu.Unlock()
	seen, spent, err := p.listTracked(ctx, byTranscription, from, fullPass)
	if err != nil {
		return err
	}
	failpoint.Hit("tracking")
	if fullPass {
		p.mu.Lock()
		p.lastFullPass = p.now()
		p.mu.Unlock()
	}
	var final []*Job
	for id, j := range byTranscription {
		st, ok := seen[id]
		switch {
		case !ok && fullPass:
			if err := p.checkGone(ctx, j); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
		case st == api.StatusProcessing && j.State == StateQueued:
			if err := p.move(ctx, j, StateProcessing, ""); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
		case st == api.StatusCompleted || st == api.StatusFailed || st == api.StatusInsufficientBalance:
			final = append(final, j)
		}
	}
	if allowance >= 0 { // the oldest first; the rest are listed final again on a later poll
		slices.SortFunc(final, func(a, b *Job) int { return cmp.Or(a.AttemptAt.Compare(b.AttemptAt), cmp.Compare(a.ID, b.ID)) })
		final = final[:min(len(final), max(0, allowance-spent))]
	}
	for _, j := range final {
		if err := p.learn(ctx, j, j.TranscriptionID); err != nil {
			return err
		}
	}
	return nil
}

// trackPage is the page size of the tracker's lists (the most the API allows).
const trackPage = 100

// listTracked lists this installation's transcriptions of every status the tracker follows
// (queued too on a full pass) created since from, and returns the status each tracked one was
// listed with, and how many list requests (pages) that took.
func (p *Pipeline) listTracked(ctx context.Context, tracked map[string]*Job, from time.Time, fullPass bool) (map[string]string, int, error) {
	statuses := []string{api.StatusProcessing, api.StatusCompleted, api.StatusFailed, api.StatusInsufficientBalance}
	if fullPass {
		statuses = append(statuses, api.StatusQueued)
	}
	seen, pages := map[string]string{}, 0
	for _, st := range statuses {
		n := 0
		for it, err := range p.API.All(ctx, api.ListParams{Status: st, MetadataKey: "bridge_instance", MetadataValue: p.Instance, DateFrom: from, Limit: trackPage}) {
			if err != nil {
				return nil, 0, fmt.Errorf("list %s: %w", st, err)
			}
			n++
			if tracked[it.ID] != nil {
				seen[it.ID] = st
			}
		}
		pages += max(1, (n+trackPage-1)/trackPage)
	}
	return seen, pages, nil
}

// contendedShare: while other requests queue for the key's data budget, the tracker polls once
// per rate window and spends at most 1/contendedShare of the window's budget (10 of 500 a
// minute): its lists, then the GETs of transcriptions listed final, the oldest first, as many
// as the rest allows; the others wait for the next poll, and the queued list of a full pass
// waits for the budget to free. Completion is learned later, the uploads get the budget: a
// backfill runs at 0.9 of the limit or more, tracking included (bridge bench backfill).
const contendedShare = 50

// budgeter is an API client that tells whether other requests queue for the key's data budget
// (*api.Client).
type budgeter interface {
	Contended() bool
	DataBudget() (perWindow int, window time.Duration)
}

// trackAllowance decides whether the tracker polls now and how many requests it may make (-1:
// no bound): every poll while the key's budget is not contended (Run's poll interval), once per
// rate window and a share of it (contendedShare) while it is.
func (p *Pipeline) trackAllowance() (allowance int, poll bool) {
	b, ok := p.API.(budgeter)
	contended := ok && b.Contended()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !contended {
		p.lastTrack = now
		return -1, true
	}
	perWindow, window := b.DataBudget()
	if now.Sub(p.lastTrack) < window {
		return 0, false
	}
	p.lastTrack = now
	return max(1, perWindow/contendedShare), true
}

// learn reads transcription id, which a list showed final, and settles job j by it: a stage of
// the recording's trace.
func (p *Pipeline) learn(ctx context.Context, j *Job, id string) (err error) {
	ctx, span := startStage(ctx, j, "recording.track")
	defer func() { endStage(span, j, err) }()
	t, err := p.API.Get(ctx, id)
	if errors.Is(err, api.ErrNotFound) { // listed final, deleted since
		return ignoreConflict(p.deletedUpstream(ctx, j, "tracking"))
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", id, err)
	}
	p.noticed(t)
	if err := p.settle(ctx, j, t); err != nil && !errors.Is(err, ErrConflict) {
		return err
	}
	return nil
}

// reasonProcessedUnseen is the reason of a job's processing step that no poll saw: the
// transcription was processed between two polls.
const reasonProcessedUnseen = "processed between two polls"

// goneCheck is how often the tracker also lists queued transcriptions.
const goneCheck = 10 * time.Minute

// checkGone asks for a transcription that no list showed, not even queued: deleted upstream
// means the job ends deleted.
func (p *Pipeline) checkGone(ctx context.Context, j *Job) error {
	_, err := p.API.Get(ctx, j.TranscriptionID)
	if errors.Is(err, api.ErrNotFound) {
		return p.deletedUpstream(ctx, j, "tracking")
	}
	return nil // listed meanwhile, or a passing error: the next pass decides
}

// deletedUpstream ends a job whose transcription no longer exists upstream (a read the bridge
// made while doing what answered 404) deleted, with its transcription.deleted event: the
// tracker (queued, processing), the reporter (transcribed) and exports (done) all end such a
// job here. The move is conditional on the job's state and revision, so of two readers that
// notice it (or a forget at the same time) one moves it and the event goes out once.
func (p *Pipeline) deletedUpstream(ctx context.Context, j *Job, while string) error {
	if j.State == StateDeleted {
		return nil
	}
	reason := "the transcription was deleted upstream (404 while " + while + ")"
	return p.move(ctx, j, StateDeleted, reason, DeletedEvent(j, "upstream", reason))
}

// DeletedEvent is job j's transcription.deleted event: why (cause "upstream" or "forgotten",
// and the reason) and the ids a receiver finds its copies by (transcription, external id,
// source item); never the file's name, link or owner.
func DeletedEvent(j *Job, cause, reason string) Event {
	d := map[string]any{"cause": cause, "reason": api.Redact(reason),
		"source": map[string]any{"name": j.Source, "item_id": j.ItemID}}
	if j.ExternalID != "" {
		d["external_id"] = j.ExternalID
	}
	b, _ := json.Marshal(d)
	return Event{Type: EventDeleted, JobID: j.ID, TranscriptionID: j.TranscriptionID, Data: b}
}

// GoneUpstream ends the job of transcription id deleted, when a read made elsewhere (an
// export's download) answered 404; while says what was reading. It reports whether a job moved:
// false when no job has that transcription or it was deleted already.
func (p *Pipeline) GoneUpstream(ctx context.Context, id, while string) (bool, error) {
	if id == "" {
		return false, nil
	}
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateQueued, StateProcessing, StateTranscribed, StateDone}})
	if err != nil {
		return false, err
	}
	for i := range jobs {
		if jobs[i].TranscriptionID != id {
			continue
		}
		err := p.deletedUpstream(ctx, &jobs[i], while)
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrIllegalTransition) {
			return false, nil // moved meanwhile: whoever moved it decided
		}
		return err == nil, err
	}
	return false, nil
}

// settle moves a job whose transcription reached a final status. A completed transcription
// was processed and transcribed: the job's history records both steps (processing when no
// poll saw it, transcribed even when its reports are ready too), then done once the reports
// are, so the history shows every state the job went through.
func (p *Pipeline) settle(ctx context.Context, j *Job, t *api.Transcription) error {
	switch t.Status {
	case api.StatusCompleted:
		if j.State == StateQueued {
			if err := p.move(ctx, j, StateProcessing, reasonProcessedUnseen); err != nil {
				return err
			}
		}
		done := p.reportsDone(j, t)
		if j.State != StateTranscribed {
			reason := "transcript ready; waiting for reports"
			if done {
				reason = "transcript ready"
			}
			if err := p.move(ctx, j, StateTranscribed, reason); err != nil {
				return err
			}
		}
		if done {
			return p.complete(ctx, j, t)
		}
		return nil
	case api.StatusFailed:
		code := "failed"
		if t.ErrorCode != nil {
			code = *t.ErrorCode
		}
		return p.move(ctx, j, StateFailed, code, NewEvent(EventFailed, j, map[string]any{"error_code": code}))
	case api.StatusInsufficientBalance:
		if t.RequiredMinutes != nil {
			j.RequiredMinutes = *t.RequiredMinutes
		}
		reason := fmt.Sprintf("insufficient_balance: needs %.2f minutes; uploaded again once they are available", j.RequiredMinutes)
		ev := NewEvent(EventInsufficientBalance, j, map[string]any{"required_minutes": t.RequiredMinutes, "available_minutes": t.AvailableMinutes})
		j.NextAt = p.now()
		return p.move(ctx, j, StateResubmit, reason, ev)
	}
	return nil
}
