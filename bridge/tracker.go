package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/failpoint"
)

// Track learns what happened to queued and processing jobs from the list endpoint, filtered by
// status, creation date and this installation's bridge_instance metadata, and GETs only the
// transcriptions that reached a final status. Queued transcriptions, which grow with the backlog,
// are listed only every 10 minutes (to notice deletions upstream); a poll otherwise costs one list
// per status and page of processing (bounded by the plan's concurrency) and finished
// transcriptions, whatever the number waiting.
func (p *Pipeline) Track(ctx context.Context) error {
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateQueued, StateProcessing}})
	if err != nil || len(jobs) == 0 {
		return err
	}
	byTranscription := map[string]*Job{}
	from := p.now()
	for i := range jobs {
		byTranscription[jobs[i].TranscriptionID] = &jobs[i]
		if jobs[i].AttemptAt.Before(from) {
			from = jobs[i].AttemptAt
		}
	}
	from = from.Add(-24 * time.Hour) // dates are UTC days; a day of slack covers clock skew
	seen := map[string]string{}
	statuses := []string{api.StatusProcessing, api.StatusCompleted, api.StatusFailed, api.StatusInsufficientBalance}
	p.mu.Lock()
	fullPass := p.now().Sub(p.lastFullPass) >= goneCheck
	p.mu.Unlock()
	if fullPass {
		statuses = append(statuses, api.StatusQueued)
	}
	for _, st := range statuses {
		for it, err := range p.API.All(ctx, api.ListParams{Status: st, MetadataKey: "bridge_instance", MetadataValue: p.Instance, DateFrom: from}) {
			if err != nil {
				return fmt.Errorf("list %s: %w", st, err)
			}
			if byTranscription[it.ID] != nil {
				seen[it.ID] = st
			}
		}
	}
	failpoint.Hit("tracking")
	if fullPass {
		p.mu.Lock()
		p.lastFullPass = p.now()
		p.mu.Unlock()
	}
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
			if err := p.learn(ctx, j, id); err != nil {
				return err
			}
		}
	}
	return nil
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
