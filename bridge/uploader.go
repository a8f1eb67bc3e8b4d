package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/failpoint"
	"github.com/transcript-bridge/bridge/internal/media"
)

// Delays before a job is looked at again.
const (
	balanceRecheck = time.Minute
	holdRecheck    = 10 * time.Minute
)

// Upstream codes that mean the file will never be taken (→ skipped); codes that mean a setting
// must change first (→ held, tried again every 10 minutes). Others fail the job.
var (
	skipCodes = map[string]bool{
		api.CodeUnsupportedFileFormat: true, api.CodeFileTooSmall: true, api.CodeFileSizeLimitExceeded: true,
		api.CodeFilenameRequired: true, api.CodeExternalIDInvalid: true, api.CodeExternalIDTooLong: true,
		api.CodeMetadataTooDeep: true, api.CodeMetadataValueInvalid: true, "metadata_too_large": true,
		"metadata_key_too_long": true, "metadata_invalid_json": true, "metadata_not_object": true,
	}
	holdCodes = map[string]bool{
		api.CodeAuthorNotMember: true, api.CodeInvalidAuthor: true, api.CodeUnsupportedAuthorType: true,
		api.CodePromptNotFound: true, api.CodeTooManyReports: true, api.CodeUploadScopeRequired: true,
		api.CodeReportsScopeRequired: true, api.CodeAPIAccessDenied: true, "unsupported_language": true,
		"project_not_found": true, "invalid_speakers_count": true,
	}
	// authorCodes are the hold codes that refuse the author (HoldAuthorRefused; the others are
	// HoldUpstreamSetting).
	authorCodes = map[string]bool{api.CodeAuthorNotMember: true, api.CodeInvalidAuthor: true, api.CodeUnsupportedAuthorType: true}
)

// StartUploads starts an upload for each due job in ready, resubmit, held or uploading (an
// attempt cut short by a crash), up to UploadConcurrency at once, after checking the balance.
func (p *Pipeline) StartUploads(ctx context.Context, wg *sync.WaitGroup) error {
	p.setDefaults()
	p.mu.Lock()
	free := p.UploadConcurrency - len(p.inFlight)
	p.mu.Unlock()
	if free <= 0 {
		return nil
	}
	jobs, err := p.Store.Jobs(ctx, JobFilter{States: []State{StateUploading, StateReady, StateResubmit, StateHeld}, DueBefore: p.now(), Limit: 200})
	if err != nil {
		return err
	}
	// Mark the candidates in flight at once, so concurrent steps never pick the same job.
	var due []Job
	p.mu.Lock()
	for _, j := range jobs {
		if Unmapped(&j) {
			continue // waits for its owner's mapping (MapDiscovered)
		}
		if !p.inFlight[j.ID] && len(due) < free {
			p.inFlight[j.ID] = true
			due = append(due, j)
		}
	}
	p.mu.Unlock()
	release := func(id string) {
		p.mu.Lock()
		delete(p.inFlight, id)
		p.mu.Unlock()
	}
	started := map[string]bool{}
	defer func() {
		for _, j := range due {
			if !started[j.ID] {
				release(j.ID)
			}
		}
	}()
	if len(due) == 0 {
		return nil
	}
	balance, err := p.balance(ctx, due)
	if err != nil {
		p.log().Warn("balance check failed; uploads wait", "error", err)
		return nil
	}
	for i := range due {
		j := &due[i]
		switch {
		case j.State == StateResubmit && balance < j.RequiredMinutes,
			j.State == StateHeld && j.Hold == HoldNoBalance && balance <= 0:
			j.NextAt = p.now().Add(balanceRecheck)
			if err := p.move(ctx, j, j.State, ""); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
			continue
		case j.State == StateReady && balance <= 0:
			j.NextAt = p.now().Add(balanceRecheck)
			if err := p.hold(ctx, j, HoldNoBalance, reasonNoMinutes, NewEvent(EventHeld, j, map[string]any{"reason": reasonNoMinutes})); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
			continue
		}
		started[j.ID] = true
		wg.Add(1)
		go func(j Job) {
			defer wg.Done()
			defer release(j.ID)
			sctx, span := startStage(ctx, &j, "recording.upload")
			err := p.uploadJob(sctx, &j)
			endStage(span, &j, err)
			if err != nil && ctx.Err() == nil {
				p.log().Error("upload", p.jobAttrs(&j, "error", err)...)
			}
		}(*j)
	}
	return nil
}

// balanceFresh is how long a positive balance read by StartUploads is trusted for jobs that are
// ready or uploading: a step a second would otherwise spend 60 of the key's 500 data requests a
// minute on GET /workspace, an eighth of a backfill's budget. A balance spent meanwhile costs
// nothing: the upload is answered 402 and the job waits in resubmit as it would anyway.
const balanceFresh = 15 * time.Second

// balance returns the workspace's available minutes for the due jobs: the last positive answer
// when it is younger than balanceFresh and every job is ready or uploading (a balance of zero
// or less, and a job in resubmit or held for minutes, are always asked afresh).
func (p *Pipeline) balance(ctx context.Context, due []Job) (float64, error) {
	cached := true
	for _, j := range due {
		cached = cached && (j.State == StateReady || j.State == StateUploading)
	}
	p.mu.Lock()
	b, at := p.lastBalance, p.lastBalanceAt
	p.mu.Unlock()
	if cached && b > 0 && time.Since(at) < balanceFresh {
		return b, nil
	}
	ws, err := p.API.Workspace(ctx)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.lastBalance, p.lastBalanceAt = ws.Balance.AvailableMinutes, time.Now()
	p.mu.Unlock()
	return ws.Balance.AvailableMinutes, nil
}

const reasonNoMinutes = "insufficient_balance: the workspace has no minutes left"

// reasonRemap marks the one return of a job to mapping after author_not_member.
const reasonRemap = "mapping again after the service refused the author"

// remapOnce reports whether j may go back through the mapping rules after author_not_member:
// only if it has not done so before (never a loop). It refreshes the source's member list.
func (p *Pipeline) remapOnce(ctx context.Context, j *Job) bool {
	hist, err := p.Store.History(ctx, j.ID)
	if err != nil {
		return false
	}
	for _, c := range hist {
		if strings.HasPrefix(c.Reason, reasonRemap) {
			return false
		}
	}
	if sc := p.Sources[j.Source]; sc != nil {
		if r, ok := sc.Mapper.(Refresher); ok {
			r.Refresh()
		}
	}
	return true
}

// uploadJob takes one job through an upload attempt.
// A job in uploading is due (NextAt) once its lease ran out: its holder died, or was stopped, or
// an attempt failed and waits to be tried again. Taking it over writes a new lease first, so of
// several replicas one takes it.
func (p *Pipeline) uploadJob(ctx context.Context, j *Job) error {
	if j.State == StateUploading {
		if p.now().Sub(j.AttemptAt) >= p.IdempotencyWindow {
			// Past the window the service may have forgotten the key: ask it first.
			adopted, err := p.adopt(ctx, j)
			if err != nil || adopted {
				return err
			}
			if err := p.claim(ctx, j); err != nil {
				return err
			}
		} else {
			// Within the window the same key either lands once or answers with the original.
			j.NextAt = p.now().Add(p.Lease)
			if err := p.move(ctx, j, StateUploading, ""); err != nil {
				return ignoreConflict(err)
			}
		}
	} else if err := p.claim(ctx, j); err != nil {
		return ignoreConflict(err)
	}
	var res *api.UploadResult
	err := p.keep(ctx, func(ctx context.Context) error {
		var err error
		res, err = p.send(ctx, j)
		return err
	}, p.renewUpload(*j, &j.Revision))
	if errors.Is(err, errLeaseLost) {
		p.log().Warn("upload taken over by another replica", p.jobAttrs(j, "error", err)...)
		return nil
	}
	if err != nil {
		return p.uploadFailed(ctx, j, err)
	}
	failpoint.Hit("after-upload")
	j.TranscriptionID = res.UUID
	j.NextAt = time.Time{}
	how, outcome := "uploaded", UploadUploaded
	if res.Replayed {
		how, outcome = "uploaded (answer of an earlier attempt, by idempotent replay)", UploadReplayed
	}
	p.metrics().Upload(outcome)
	return p.move(ctx, j, StateQueued, how, NewEvent(EventUploaded, j, map[string]any{"transcription_id": res.UUID, "replayed": res.Replayed}))
}

// claim stores a fresh Idempotency-Key and the attempt time before any byte is sent, with the
// attempt's lease (NextAt: now + Lease).
func (p *Pipeline) claim(ctx context.Context, j *Job) error {
	j.IdempotencyKey = uuid.NewString()
	j.AttemptAt = p.now()
	j.NextAt = j.AttemptAt.Add(p.Lease)
	j.Attempts++
	j.TranscriptionID = ""
	return p.move(ctx, j, StateUploading, fmt.Sprintf("upload attempt %d", j.Attempts))
}

// send streams the job's file to the service with the job's key.
func (p *Pipeline) send(ctx context.Context, j *Job) (*api.UploadResult, error) {
	sc := p.Sources[j.Source]
	if sc == nil {
		return nil, fmt.Errorf("%w: source %s is no longer configured", api.ErrSource, j.Source)
	}
	o := sc.Upload
	params := api.UploadParams{
		Filename: j.Name, Size: j.Size, IdempotencyKey: j.IdempotencyKey, ExternalID: j.ExternalID,
		Author: j.Author, Language: o.Language, ProjectID: o.ProjectID, Diarize: o.Diarize,
		SpeakersCount: o.SpeakersCount, AIMetadata: o.AIMetadata, Reports: o.Reports,
	}
	if len(j.Metadata) > 0 {
		params.Metadata = json.RawMessage(j.Metadata)
	}
	open := func() (io.ReadCloser, error) { return sc.Source.Open(ctx, j.Recording) }
	if j.Size <= 0 {
		// The source does not know the size: spool to a temporary file to learn it.
		path, size, err := spool(open)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", api.ErrSource, err)
		}
		defer os.Remove(path)
		params.Size = size
		open = func() (io.ReadCloser, error) { return os.Open(path) }
	}
	ext := media.Ext(j.Name)
	params.Open = func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		// A body shorter than the size is a source failure that may pass, never a short upload.
		rc = connectors.ExactBody(rc, params.Size, fmt.Sprintf("source %s item %s", j.Source, j.ItemID))
		// The first bytes, read from the stream that is then sent, must be able to be media.
		head, body, err := peek(rc, media.SniffLen)
		if err != nil {
			rc.Close()
			return nil, err
		}
		if !media.Plausible(ext, head) {
			rc.Close()
			return nil, &contentError{name: j.Name, head: head}
		}
		return &pausingReader{ReadCloser: body, half: params.Size / 2}, nil
	}
	return p.API.Upload(ctx, params)
}

// uploadFailed decides what an upload error means for the job.
func (p *Pipeline) uploadFailed(ctx context.Context, j *Job, err error) error {
	if ctx.Err() != nil {
		return nil // stopping: the job stays in uploading and is resumed with its key
	}
	code := api.CodeOf(err)
	apiErr := api.AsError(err)
	var content *contentError
	switch {
	case errors.As(err, &content):
		p.metrics().Upload(UploadSkipped)
		return p.skip(ctx, j, content.Error())
	case errors.Is(err, connectors.ErrBlocked):
		return p.sourceBlocked(ctx, j, err)
	case sourceTransient(err):
		return p.sourceFailed(ctx, j, err)
	case errors.Is(err, api.ErrSource):
		p.metrics().Upload(UploadSkipped)
		return p.skip(ctx, j, "source: "+err.Error())
	case apiErr != nil && apiErr.Status == http.StatusPaymentRequired:
		p.metrics().Upload(UploadHeld)
		j.NextAt = p.now().Add(balanceRecheck)
		return p.hold(ctx, j, HoldNoBalance, reasonNoMinutes, NewEvent(EventHeld, j, map[string]any{"reason": reasonNoMinutes}))
	case skipCodes[code]:
		p.metrics().Upload(UploadSkipped)
		return p.skip(ctx, j, serviceSkipReason(apiErr, err))
	case code == api.CodeAuthorNotMember && p.remapOnce(ctx, j):
		// The member list was stale (someone left, a binding moved): map again, once.
		p.metrics().Upload(UploadRemapped)
		j.Author = ""
		return p.move(ctx, j, StateDiscovered, reasonRemap+": "+err.Error())
	case holdCodes[code] || (apiErr != nil && (apiErr.Status == 401 || apiErr.Status == 403)):
		p.metrics().Upload(UploadHeld)
		j.NextAt = p.now().Add(holdRecheck)
		why := HoldUpstreamSetting
		if authorCodes[code] {
			why = HoldAuthorRefused
		}
		return p.hold(ctx, j, why, err.Error(), NewEvent(EventHeld, j, map[string]any{"reason": err.Error(), "code": code}))
	case apiErr != nil && apiErr.Status >= 400 && apiErr.Status < 500 && apiErr.Status != 408 && apiErr.Status != 409 && apiErr.Status != 429:
		p.metrics().Upload(UploadFailed)
		return p.move(ctx, j, StateFailed, err.Error(), NewEvent(EventFailed, j, map[string]any{"reason": err.Error(), "code": code}))
	}
	// Transient (network, 429, 5xx, in flight elsewhere): keep the key, try again later.
	p.metrics().Retry(RetryUpload)
	backoff := time.Duration(30<<min(j.Attempts, 6)) * time.Second
	j.NextAt = p.now().Add(min(backoff, 30*time.Minute))
	return p.move(ctx, j, StateUploading, "will retry with the same key: "+err.Error())
}

// adopt looks the job up upstream by its bridge_job metadata, across statuses, and takes over
// what an earlier attempt made. It reports whether it adopted something.
func (p *Pipeline) adopt(ctx context.Context, j *Job) (bool, error) {
	found := map[string]string{}
	for _, st := range []string{api.StatusQueued, api.StatusProcessing, api.StatusCompleted, api.StatusFailed, api.StatusInsufficientBalance} {
		page, err := p.API.List(ctx, api.ListParams{Status: st, MetadataKey: "bridge_job", MetadataValue: j.ID, Limit: 100})
		if err != nil {
			return false, fmt.Errorf("look up job %s upstream: %w", j.ID, err)
		}
		for _, it := range page.Items {
			if _, ok := found[st]; !ok {
				found[st] = it.ID
			}
		}
	}
	for _, st := range []string{api.StatusCompleted, api.StatusProcessing, api.StatusQueued} {
		if id := found[st]; id != "" {
			j.TranscriptionID, j.NextAt = id, time.Time{}
			p.metrics().Upload(UploadAdopted)
			return true, p.move(ctx, j, StateQueued, "adopted "+id+" found upstream by bridge_job", NewEvent(EventUploaded, j, map[string]any{"transcription_id": id, "adopted": true}))
		}
	}
	if id := found[api.StatusFailed]; id != "" {
		t, err := p.API.Get(ctx, id)
		if err != nil {
			return false, err
		}
		if t.ErrorCode != nil && *t.ErrorCode != api.ErrorUploadIncomplete {
			j.TranscriptionID = id
			p.metrics().Upload(UploadFailed)
			return true, p.move(ctx, j, StateFailed, *t.ErrorCode, NewEvent(EventFailed, j, map[string]any{"error_code": *t.ErrorCode}))
		}
	}
	return false, nil
}
