package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/transcript-bridge/bridge/api"
)

// SettleReports follows transcribed jobs until every report their source asks for is final,
// requesting those the transcription lacks, then marks them done. Like the tracker's, its
// requests are background work: the key is not contended by them (api.Background).
func (p *Pipeline) SettleReports(ctx context.Context) error {
	ctx = api.Background(ctx)
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateTranscribed}, DueBefore: p.now()})
	if err != nil {
		return err
	}
	for i := range jobs {
		if err := p.settleReports(ctx, &jobs[i]); err != nil {
			return err
		}
	}
	return nil
}

// settleReports asks for what job j's reports still need, or completes it: a stage of the
// recording's trace.
func (p *Pipeline) settleReports(ctx context.Context, j *Job) (err error) {
	ctx, span := startStage(ctx, j, "recording.reports")
	defer func() { endStage(span, j, err) }()
	t, err := p.API.Get(ctx, j.TranscriptionID)
	if errors.Is(err, api.ErrNotFound) {
		if err := p.deletedUpstream(ctx, j, "following reports"); err != nil && !errors.Is(err, ErrConflict) {
			return err
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", j.TranscriptionID, err)
	}
	if missing := p.missingReports(j, t); len(missing) > 0 {
		if _, err := p.API.RequestReports(ctx, t.ID, missing...); err != nil {
			return p.reportRequestFailed(ctx, j, t, err)
		}
		return nil
	}
	if p.reportsDone(j, t) {
		if err := p.complete(ctx, j, t); err != nil && !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return nil
}

func (p *Pipeline) wanted(j *Job) []string {
	if sc := p.Sources[j.Source]; sc != nil {
		return sc.Upload.Reports
	}
	return nil
}

// missingReports lists wanted slugs the transcription has no live report for.
func (p *Pipeline) missingReports(j *Job, t *api.Transcription) []string {
	var missing []string
	for _, slug := range p.wanted(j) {
		found := slices.ContainsFunc(t.PromptResults, func(r api.Report) bool { return r.Slug != nil && *r.Slug == slug })
		if !found {
			missing = append(missing, slug)
		}
	}
	return missing
}

// reportsDone reports whether every wanted report exists and is final.
func (p *Pipeline) reportsDone(j *Job, t *api.Transcription) bool {
	return len(p.missingReports(j, t)) == 0 && api.Done(t, p.wanted(j))
}

// Reasons of a report request refused: the job ends without the reports, or waits.
const (
	reasonReportsNotMade = "reports not made"
	reasonReportsWait    = "reports wait"
)

// reportRequestFailed: a cap reached ends the job without those reports; a quota waits.
func (p *Pipeline) reportRequestFailed(ctx context.Context, j *Job, t *api.Transcription, err error) error {
	switch api.CodeOf(err) {
	case api.CodeReportGenerationLimit, api.CodeTranscriptionFailed, api.CodePromptNotFound:
		return p.complete(ctx, j, t, reasonReportsNotMade+": "+err.Error())
	}
	if e := api.AsError(err); e != nil && e.RetryAfter > 0 {
		j.NextAt = p.now().Add(e.RetryAfter)
		return p.move(ctx, j, StateTranscribed, reasonReportsWait+": "+err.Error())
	}
	return fmt.Errorf("request reports for %s: %w", t.ID, err)
}

// complete marks the job done with one event per wanted report and transcription.completed.
func (p *Pipeline) complete(ctx context.Context, j *Job, t *api.Transcription, note ...string) error {
	var events []Event
	want := p.wanted(j)
	for _, r := range t.PromptResults {
		if r.Slug == nil || !slices.Contains(want, *r.Slug) {
			continue
		}
		typ := EventReportCompleted
		if r.Status == api.StatusFailed {
			typ = EventReportFailed
		}
		events = append(events, NewEvent(typ, j, map[string]any{"report_id": r.ID, "slug": *r.Slug, "status": r.Status}))
	}
	events = append(events, NewEvent(EventCompleted, j, map[string]any{"transcription_id": t.ID, "external_id": t.ExternalID}))
	reason := "transcript and reports ready"
	if len(note) > 0 {
		reason = note[0]
	}
	return p.move(ctx, j, StateDone, reason, events...)
}
