// Package bridge is the domain of Transcript Bridge: the job that carries each recording a
// source found (connectors.Recording) to a finished transcript exactly once, the events other
// systems hear about, the Store that keeps them, and the services of the pipeline (intake,
// mapper, uploader, tracker, reporter). Data flows down into it: connectors → mapping → bridge.
// Subpackages implement the Store on a database.
package bridge

import (
	"encoding/json"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// State is where a job stands. The main line is discovered → ready → uploading → queued →
// processing → transcribed → done; held, skipped, failed, resubmit and deleted are the side
// states.
type State string

// Job states.
const (
	// Discovered: found by a connector, not yet mapped.
	StateDiscovered State = "discovered"
	// Ready: mapped (author, external id, metadata), waiting for an upload slot.
	StateReady State = "ready"
	// Uploading: an Idempotency-Key is stored and an attempt may be on the wire.
	StateUploading State = "uploading"
	// Queued: the service accepted the file (the transcription id is stored).
	StateQueued State = "queued"
	// Processing: the service is transcribing it.
	StateProcessing State = "processing"
	// Transcribed: the transcript is ready; requested reports may still run.
	StateTranscribed State = "transcribed"
	// Done: the transcript and every requested report are terminal.
	StateDone State = "done"
	// Held: waiting for something outside (a member mapping, minutes, the source).
	StateHeld State = "held"
	// Skipped: will never be uploaded (filtered, too small, too large, unsupported, invalid
	// mapping); the reason is stored.
	StateSkipped State = "skipped"
	// Failed: the service failed it (its error_code) or refused it for good.
	StateFailed State = "failed"
	// Resubmit: the service ended it insufficient_balance and kept no file; it is uploaded again
	// with a new key once the balance covers it.
	StateResubmit State = "resubmit"
	// Deleted: the transcription is gone, forgotten (bridge forget) or deleted upstream (a read
	// answered 404); the reason says which. transcription.deleted went out once, with the move.
	StateDeleted State = "deleted"
)

// States lists every state, in pipeline order.
var States = []State{StateDiscovered, StateReady, StateUploading, StateQueued, StateProcessing,
	StateTranscribed, StateDone, StateHeld, StateSkipped, StateFailed, StateResubmit, StateDeleted}

// Terminal reports whether a job in s will never move again by itself.
func (s State) Terminal() bool {
	return s == StateDone || s == StateSkipped || s == StateFailed || s == StateDeleted
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	for _, x := range States {
		if x == s {
			return true
		}
	}
	return false
}

// HoldReason says, typed, why a held job waits; Job.Reason keeps the words. A job has one
// exactly when it is held.
type HoldReason string

// Hold reasons.
const (
	// HoldUnmapped: no member matches the recording's owner (mapping.ErrUnmapped); mapped again
	// every minute and at once when the mapping changes.
	HoldUnmapped HoldReason = "unmapped"
	// HoldNoBalance: the workspace has no minutes left; uploaded once the balance allows.
	HoldNoBalance HoldReason = "no_balance"
	// HoldSourceUnavailable: the source kept failing past its retry deadline (a download that
	// keeps failing); tried again every few hours.
	HoldSourceUnavailable HoldReason = "source_unavailable"
	// HoldSourceBlocked: the source refused the download until its account is set up or a quota
	// renews (402 Payment Required, a licence or access policy missing, a daily download quota
	// spent: connectors.ErrBlocked); tried again daily (or when the source said) and at once
	// when released by hand. Never a failure: the recording is fine.
	HoldSourceBlocked HoldReason = "source_blocked"
	// HoldAuthorRefused: the service refused the author (not a member, invalid, unsupported
	// type) after the job was mapped again once; tried again every 10 minutes.
	HoldAuthorRefused HoldReason = "author_refused"
	// HoldUpstreamSetting: the service refused a setting (the key's rights, a report, the
	// language, the project, …); tried again every 10 minutes.
	HoldUpstreamSetting HoldReason = "upstream_setting"
)

// HoldReasons lists every hold reason.
var HoldReasons = []HoldReason{HoldUnmapped, HoldNoBalance, HoldSourceUnavailable, HoldSourceBlocked, HoldAuthorRefused, HoldUpstreamSetting}

// Job carries one recording through the pipeline.
type Job struct {
	// ID is the job's UUID; it is sent as metadata bridge_job.
	ID string `json:"id"`
	// Recording is what the source found; its fields are the job's own in JSON (the stored
	// recording, jobs list -o json).
	connectors.Recording
	State State `json:"state"`
	// Reason says why the job is held, skipped or failed (an upstream code kept verbatim).
	Reason string `json:"reason,omitempty"`
	// Hold says, typed, why a held job waits (empty unless held).
	Hold HoldReason `json:"hold,omitempty"`
	// Author, ExternalID and Metadata are the mapped upload headers.
	Author     string          `json:"author,omitempty"`
	ExternalID string          `json:"external_id,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	// IdempotencyKey is stored before the first attempt and reused by every retry.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// AttemptAt is when the current key's first attempt started.
	AttemptAt time.Time `json:"attempt_at,omitzero"`
	// Attempts counts upload attempts across keys.
	Attempts int `json:"attempts"`
	// TranscriptionID is the service's id once the upload was accepted.
	TranscriptionID string `json:"transcription_id,omitempty"`
	// RequiredMinutes is what the service said the file needs (insufficient_balance).
	RequiredMinutes float64 `json:"required_minutes,omitempty"`
	// NextAt is when the job is due to be looked at again.
	NextAt time.Time `json:"next_at,omitzero"`
	// CreatedAt and UpdatedAt are the job's times.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Revision counts the job's writes (1 when added); JobStore.Update compares it, so a copy
	// read before another write (a replica that lost its lease) can no longer write.
	Revision int64 `json:"-"`
}

// Change is one entry of a job's history.
type Change struct {
	JobID  string    `json:"job_id"`
	From   State     `json:"from"`
	To     State     `json:"to"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}
