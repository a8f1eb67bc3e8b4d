package bridge

import (
	"context"
	"time"
)

// EventDeleted tells endpoints that a transcription is gone: forgotten (bridge forget) or
// deleted upstream. Receivers delete their copies.
const EventDeleted = "transcription.deleted"

// Tombstone is what a forgotten job leaves behind: ids only, never a name or an e-mail address.
// A scan never stores a job again for a tombstoned source item or dedupe key, mapping skips a
// job whose external id is tombstoned, and exports leave the transcription out.
type Tombstone struct {
	// JobID is the forgotten job.
	JobID string `json:"job_id"`
	// Source and ItemID name the item at its source (every version of it).
	Source string `json:"source"`
	ItemID string `json:"item_id"`
	// DedupeKey, ExternalID and TranscriptionID are the job's, when it had them.
	DedupeKey       string `json:"dedupe_key,omitempty"`
	ExternalID      string `json:"external_id,omitempty"`
	TranscriptionID string `json:"transcription_id,omitempty"`
	// Reason says who forgot it and how ("bridge forget --owner-email by admin").
	Reason string `json:"reason,omitempty"`
	// CreatedAt is when it was forgotten.
	CreatedAt time.Time `json:"created_at"`
}

// Scrubbed counts what a store removed of a forgotten job.
type Scrubbed struct {
	// Deliveries and Attempts are the job's deliveries (their payloads) and attempts (the
	// response bodies), except those of its transcription.deleted event.
	Deliveries int `json:"deliveries"`
	Attempts   int `json:"attempts"`
	// Events are the job's outbox events removed (handed on) or emptied (not yet handed on).
	Events int `json:"events"`
	// History are the reasons of the job's earlier changes emptied (they may quote an owner).
	History int `json:"history"`
	// Tombstone is true when the tombstone was new.
	Tombstone bool `json:"tombstone"`
}

// Zero reports whether nothing was removed or added.
func (s Scrubbed) Zero() bool { return s == Scrubbed{} }

// TombstoneQuery asks whether any tombstone matches one of its non-empty fields (Source with
// ItemID together).
type TombstoneQuery struct {
	JobID           string
	Source, ItemID  string
	DedupeKey       string
	ExternalID      string
	TranscriptionID string
}

// Retention kinds: what the purge removes past its age.
const (
	// RetainDeliveries: delivered deliveries (their payloads) and their attempts (response
	// bodies), by their last update.
	RetainDeliveries = "deliveries"
	// RetainDeadLetters: dead deliveries and their attempts, by their last update.
	RetainDeadLetters = "dead_letters"
	// RetainJobs: finished jobs (done, skipped, failed, deleted) with their history, events and
	// deliveries, by their last update.
	RetainJobs = "jobs"
)

// RetentionKinds lists the kinds a store purges, in the order the purge takes them.
var RetentionKinds = []string{RetainDeliveries, RetainDeadLetters, RetainJobs}

// PrivacyStore keeps tombstones and purges what is past its age: what forget and retention use.
// Both stores implement it; a store's AddRecordings leaves out tombstoned items.
type PrivacyStore interface {
	// Forget stores t (a no-op when the job has one) and removes the job's deliveries and their
	// attempts and its handed-on outbox events, and empties the data of those not yet handed
	// on, except what belongs to its transcription.deleted events, in one transaction.
	Forget(ctx context.Context, t Tombstone) (Scrubbed, error)
	// Tombstoned reports whether a tombstone matches q.
	Tombstoned(ctx context.Context, q TombstoneQuery) (bool, error)
	// Tombstones lists the tombstones, oldest first.
	Tombstones(ctx context.Context) ([]Tombstone, error)
	// Purge removes up to limit rows of kind (one of RetentionKinds) last changed before before
	// (a job counts with its history, events and deliveries; a delivery with its attempts), in
	// one transaction, and returns how many it removed.
	Purge(ctx context.Context, kind string, before time.Time, limit int) (int, error)
	// Expired counts the rows of kind last changed before before and returns the oldest one's
	// time (zero when none).
	Expired(ctx context.Context, kind string, before time.Time) (int, time.Time, error)
}

// finished are the states a job never leaves by itself: retention purges them past their age.
var finished = []State{StateDone, StateSkipped, StateFailed, StateDeleted}

// Finished lists the states a job is purged from past its retention age.
func Finished() []State { return append([]State(nil), finished...) }
