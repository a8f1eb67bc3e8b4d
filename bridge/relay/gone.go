package relay

import (
	"context"
	"errors"

	"github.com/transcript-bridge/bridge/bridge"
)

// ErrDeletedUpstream is a full payload's fetch answered 404: the transcription was deleted
// upstream, so the message can never carry its record. Its text is the settled attempt's note.
var ErrDeletedUpstream = errors.New("not sent: transcription deleted upstream (its transcription.deleted follows)")

// whileFetching is what was reading when a full payload's fetch answered 404, for the job's
// reason ("… (404 while fetching a webhook's full payload)").
const whileFetching = "fetching a webhook's full payload"

// endDeleted ends the job of d's transcription deleted (GoneUpstream: once across replicas,
// with its one transcription.deleted) and reports whether d may be settled: never sent, since
// it can never carry its full payload; the receiver hears the deletion instead. It is settled as
// a filtered one is (delivered, with a note; OutcomeDeletedUpstream), not as a dead letter: the
// endpoint did nothing wrong, so its health stays as it was and no replay would help. When the
// store fails, d is left to be tried again like a failed fetch (the cached 404 brings it back
// here), so the job is not left behind.
func (r *Relay) endDeleted(ctx context.Context, d *bridge.Delivery) bool {
	if r.GoneUpstream == nil {
		return true
	}
	moved, err := r.GoneUpstream(ctx, d.TranscriptionID, whileFetching)
	if err != nil {
		r.Log.Error("transcription deleted upstream: the job could not be ended deleted", deliveryAttrs(d, "error", err)...)
		return false
	}
	if moved {
		r.Log.Warn("transcription deleted upstream: job ended deleted", deliveryAttrs(d)...)
	}
	return true
}
