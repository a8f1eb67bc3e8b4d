package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// Deleter deletes a transcription upstream; *api.Client implements it.
type Deleter interface {
	Delete(ctx context.Context, id string) error
}

// ForgetStore is what Forget needs of the store: the jobs and their tombstones.
type ForgetStore interface {
	JobStore
	PrivacyStore
}

// CopyRemover removes the bridge's copies of transcription id kept outside the store (the
// exports' local files: export.RemoveCopies) and says what it did (with dryRun: would do).
type CopyRemover func(ctx context.Context, id string, dryRun bool) ([]string, error)

// ForgetTarget names what to forget: one job, every job with an external id, or every job of an
// owner (the recording's owner's e-mail or the author email:<address>). Exactly one is set.
type ForgetTarget struct {
	JobID      string `json:"job_id,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	OwnerEmail string `json:"owner_email,omitempty"`
}

// String names the target as the command line does ("--job 0190…"), but for an owner's
// e-mail address, which it leaves out ("--owner-email"): the string goes into the job's
// reason, its tombstone and the audit log, which must not keep what was forgotten.
func (t ForgetTarget) String() string {
	switch {
	case t.JobID != "":
		return "--job " + t.JobID
	case t.ExternalID != "":
		return "--external-id " + t.ExternalID
	default:
		return "--owner-email"
	}
}

// Forgotten is what Forget did (or, in a dry run, would do) to one job.
type Forgotten struct {
	JobID           string `json:"job_id"`
	TranscriptionID string `json:"transcription_id,omitempty"`
	// State is the job's state before.
	State State `json:"state"`
	// Actions say what was done, in order; empty when there was nothing left to do.
	Actions []string `json:"actions"`
}

// ErrInFlight is wrapped by Forget's error for a job whose upload is on the wire (uploading,
// under its lease): the transcription it creates would escape the forget. The other jobs are
// forgotten; run forget again once the upload has settled (within the replica's lease).
var ErrInFlight = errors.New("an upload is in flight")

// ErrDeleteRight is wrapped by Forget's error when the API key lacks the transcriptions:delete
// right (403 delete_scope_required).
var ErrDeleteRight = errors.New("the API key lacks the transcriptions:delete right")

// Forget forgets the jobs t names: for each, it deletes the transcription upstream (DELETE
// /transcriptions/{id}; a 404 means it is gone already), ends the job deleted with its
// recording's name, link, owner, author and metadata removed and one transcription.deleted
// event (signed and sent by the relay to every endpoint subscribed), then keeps a tombstone and
// removes the job's deliveries, attempts and events (PrivacyStore.Forget). It is idempotent: a
// second run finds nothing to do. With dryRun it changes nothing and says what it would do.
// who names the actor in the job's reason and tombstone. Each of copies removes the
// transcription's copies outside the store (the exports' files).
func Forget(ctx context.Context, s ForgetStore, d Deleter, t ForgetTarget, who string, dryRun bool, now time.Time, copies ...CopyRemover) ([]Forgotten, error) {
	jobs, err := FindForget(ctx, s, t)
	if err != nil {
		return nil, err
	}
	reason := fmt.Sprintf("forgotten: bridge forget %s by %s", t, who)
	var out []Forgotten
	var later []error
	for i := range jobs {
		j := &jobs[i]
		if j.State == StateUploading && j.NextAt.After(now) {
			later = append(later, fmt.Errorf("job %s: %w until %s: forget again then", j.ID, ErrInFlight, j.NextAt.UTC().Format(time.RFC3339)))
			out = append(out, Forgotten{JobID: j.ID, State: j.State, Actions: []string{}})
			continue
		}
		f, err := forgetJob(ctx, s, d, j, reason, dryRun, now, copies)
		out = append(out, f)
		if err != nil {
			return out, err
		}
	}
	return out, errors.Join(later...)
}

// FindForget returns the jobs t names, oldest first; ErrNotFound for an unknown --job.
func FindForget(ctx context.Context, s JobStore, t ForgetTarget) ([]Job, error) {
	if t.JobID != "" {
		j, err := s.Job(ctx, t.JobID)
		if err != nil {
			return nil, err
		}
		return []Job{*j}, nil
	}
	all, err := s.Jobs(ctx, JobFilter{})
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, j := range all {
		if t.matches(&j) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (t ForgetTarget) matches(j *Job) bool {
	if t.ExternalID != "" {
		return j.ExternalID == t.ExternalID
	}
	e := strings.TrimSpace(t.OwnerEmail)
	if e == "" {
		return false
	}
	return (j.Owner != nil && strings.EqualFold(j.Owner.Email, e)) || strings.EqualFold(j.Author, "email:"+e)
}

// forgetJob forgets one job; the job is read again after a conflict (the tracker moved it).
func forgetJob(ctx context.Context, s ForgetStore, d Deleter, j *Job, reason string, dryRun bool, now time.Time, copies []CopyRemover) (Forgotten, error) {
	f := Forgotten{JobID: j.ID, TranscriptionID: j.TranscriptionID, State: j.State, Actions: []string{}}
	strays, err := deleteStrays(ctx, d, j, dryRun)
	f.Actions = append(f.Actions, strays...)
	if err != nil {
		return f, err
	}
	if j.TranscriptionID != "" && j.State != StateDeleted { // deleted: gone upstream already
		act, err := deleteUpstream(ctx, d, j.TranscriptionID, dryRun)
		if err != nil {
			return f, err
		}
		f.Actions = append(f.Actions, act)
	}
	for attempt := 0; ; attempt++ {
		act, err := endDeleted(ctx, s, j, reason, dryRun, now)
		if errors.Is(err, ErrConflict) && attempt < 3 {
			if j, err = s.Job(ctx, j.ID); err != nil {
				return f, err
			}
			continue
		}
		if err != nil {
			return f, err
		}
		if act != "" {
			f.Actions = append(f.Actions, act)
		}
		break
	}
	for _, rm := range copies {
		if j.TranscriptionID == "" {
			break
		}
		acts, err := rm(ctx, j.TranscriptionID, dryRun)
		f.Actions = append(f.Actions, acts...)
		if err != nil {
			return f, fmt.Errorf("forget job %s: copies: %w", j.ID, err)
		}
	}
	acts, err := scrub(ctx, s, j, reason, dryRun, now)
	f.Actions = append(f.Actions, acts...)
	return f, err
}

// Lister lists transcriptions upstream; *api.Client implements it. A Deleter that is one lets
// Forget find what an interrupted upload of a job made (by its bridge_job metadata).
type Lister interface {
	List(ctx context.Context, p api.ListParams) (*api.ListPage, error)
}

// deleteStrays deletes the transcriptions an upload of j made that j does not know of (the
// process died before it stored the id): found upstream by their bridge_job metadata, as the
// uploader adopts them. Only for a job that tried to upload and has no transcription id.
func deleteStrays(ctx context.Context, d Deleter, j *Job, dryRun bool) ([]string, error) {
	l, ok := d.(Lister)
	if !ok || j.TranscriptionID != "" || j.Attempts == 0 || j.State == StateDeleted {
		return nil, nil
	}
	var acts []string
	for _, st := range []string{api.StatusQueued, api.StatusProcessing, api.StatusCompleted, api.StatusFailed, api.StatusInsufficientBalance} {
		page, err := l.List(ctx, api.ListParams{Status: st, MetadataKey: "bridge_job", MetadataValue: j.ID, Limit: 100})
		if err != nil {
			return acts, fmt.Errorf("look up job %s upstream: %w", j.ID, err)
		}
		for _, it := range page.Items {
			act, err := deleteUpstream(ctx, d, it.ID, dryRun)
			if err != nil {
				return acts, err
			}
			acts = append(acts, act+" (found by its bridge_job metadata)")
		}
	}
	return acts, nil
}

// deleteUpstream deletes transcription id (a 404: gone already) and says what it did.
func deleteUpstream(ctx context.Context, d Deleter, id string, dryRun bool) (string, error) {
	if dryRun {
		return "delete transcription " + id + " upstream", nil
	}
	err := d.Delete(ctx, id)
	switch {
	case err == nil:
		return "deleted transcription " + id + " upstream", nil
	case errors.Is(err, api.ErrNotFound):
		return "transcription " + id + " was gone upstream already", nil
	case api.CodeOf(err) == api.CodeDeleteScopeRequired:
		return "", fmt.Errorf("delete transcription %s: %w (403 delete_scope_required): give the key that right, or delete it upstream by hand, and run forget again", id, ErrDeleteRight)
	}
	return "", fmt.Errorf("delete transcription %s: %w", id, err)
}

// endDeleted moves j to deleted with its personal fields removed and the transcription.deleted
// event; a job deleted upstream before keeps its state and loses those fields in place.
func endDeleted(ctx context.Context, s JobStore, j *Job, reason string, dryRun bool, now time.Time) (string, error) {
	if j.State == StateDeleted && scrubbed(j) {
		return "", nil
	}
	act := "end the job deleted, without the recording's name, link, owner and metadata, and send " + EventDeleted
	if j.State == StateDeleted {
		act = "remove the recording's name, link, owner and metadata from the job"
	}
	if dryRun {
		return act, nil
	}
	was := *j
	scrubJob(j)
	var err error
	if was.State == StateDeleted {
		err = Move(ctx, s, j, StateDeleted, "", now)
	} else {
		err = Move(ctx, s, j, StateDeleted, reason, now, DeletedEvent(&was, "forgotten", reason))
	}
	if err != nil {
		*j = was
		return "", err
	}
	return strings.Replace(strings.Replace(act, "end ", "ended ", 1), "send ", "sent ", 1), nil
}

// scrub keeps j's tombstone and removes its deliveries, attempts and events.
func scrub(ctx context.Context, s ForgetStore, j *Job, reason string, dryRun bool, now time.Time) ([]string, error) {
	if dryRun {
		had, err := s.Tombstoned(ctx, TombstoneQuery{JobID: j.ID})
		if err != nil || had {
			return nil, err
		}
		return []string{"remove its delivery payloads, attempt bodies and events; keep a tombstone"}, nil
	}
	n, err := s.Forget(ctx, Tombstone{JobID: j.ID, Source: j.Source, ItemID: j.ItemID, DedupeKey: j.DedupeKey,
		ExternalID: j.ExternalID, TranscriptionID: j.TranscriptionID, Reason: reason, CreatedAt: now})
	if err != nil {
		return nil, fmt.Errorf("forget job %s: %w", j.ID, err)
	}
	var acts []string
	if n.Deliveries+n.Attempts+n.Events > 0 {
		acts = append(acts, fmt.Sprintf("removed %d deliveries, %d attempts and %d events", n.Deliveries, n.Attempts, n.Events))
	}
	if n.Tombstone {
		acts = append(acts, "kept a tombstone")
	}
	return acts, nil
}

// scrubJob removes what a job says of a person: the recording's name, link, owner, fields,
// metadata and source external id, the author and the metadata sent. Ids stay.
func scrubJob(j *Job) {
	r := j.Recording
	j.Recording = r
	j.Recording.Name, j.Recording.Link, j.Recording.Owner, j.Recording.Fields = "", "", nil, nil
	j.Recording.Metadata, j.Recording.SourceExternalID, j.Recording.Size = nil, "", 0
	j.Author, j.Metadata = "", nil
}

// scrubbed reports whether scrubJob has nothing left to remove.
func scrubbed(j *Job) bool {
	return j.Name == "" && j.Link == "" && j.Owner == nil && j.Fields == nil && j.Recording.Metadata == nil &&
		j.SourceExternalID == "" && j.Size == 0 && j.Author == "" && len(j.Metadata) == 0
}
