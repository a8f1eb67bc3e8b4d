package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// AuthorMapper decides who owns a recording's owner now, in the form PATCH /transcriptions/{id}
// takes; *mapping.Mapper implements it.
type AuthorMapper interface {
	AuthorFor(ctx context.Context, o *connectors.Owner) (string, bool, error)
}

// ReassignAPI is what Reassign needs of the service; *api.Client implements it.
type ReassignAPI interface {
	Members(ctx context.Context) ([]api.Member, error)
	Get(ctx context.Context, id string) (*api.Transcription, error)
	Assign(ctx context.Context, id, author string) (*api.Transcription, error)
}

var _ ReassignAPI = (*api.Client)(nil)

// Reassignment is one uploaded job whose transcription's author differs from the member its
// owner maps to now.
type Reassignment struct {
	JobID, ItemID, TranscriptionID string
	// Author is the author the owner maps to now; UpstreamAuthor the one the transcription has
	// (email:…).
	Author, UpstreamAuthor string
	// Done is set when the author was changed upstream and on the job; Err says why it was not.
	Done bool
	Err  error
}

// Reassign maps the owner of each of the source's uploaded jobs (queued to done) again with m
// (after bindings changed) and lists those whose transcription has another author upstream;
// with apply, it PATCHes each one's author and records it on the job through Move, in place,
// with the reason "reassigned to <author>". A failed PATCH is reported in its Reassignment; a
// failure to read the jobs, the members or a transcription, or to write a job, stops it.
// Transcriptions deleted upstream are left out.
func Reassign(ctx context.Context, s JobStore, m AuthorMapper, c ReassignAPI, source string, apply bool, now time.Time) ([]Reassignment, error) {
	jobs, err := s.Jobs(ctx, JobFilter{Source: source, States: []State{StateQueued, StateProcessing, StateTranscribed, StateDone}})
	if err != nil {
		return nil, err
	}
	members, err := c.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	out := []Reassignment{}
	for _, j := range jobs {
		want, ok, err := m.AuthorFor(ctx, j.Owner)
		if err != nil {
			return out, err
		}
		if !ok || j.TranscriptionID == "" {
			continue
		}
		t, err := c.Get(ctx, j.TranscriptionID) // who owns it now, upstream
		if errors.Is(err, api.ErrNotFound) {    // deleted upstream since
			continue
		}
		if err != nil {
			return out, err
		}
		then := "email:" + t.Author.Email
		if mapping.MemberAuthor(members, want) == mapping.MemberAuthor(members, then) {
			continue
		}
		r := Reassignment{JobID: j.ID, ItemID: j.ItemID, TranscriptionID: j.TranscriptionID, Author: want, UpstreamAuthor: then}
		if apply {
			if _, err := c.Assign(ctx, j.TranscriptionID, want); err != nil {
				r.Err = err
			} else {
				j.Author = want
				if err := Move(ctx, s, &j, j.State, "reassigned to "+want, now); err != nil {
					return out, err
				}
				r.Done = true
			}
		}
		out = append(out, r)
	}
	return out, nil
}
