package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// owners maps owner ids to authors (an AuthorMapper).
type owners map[string]string

func (o owners) AuthorFor(_ context.Context, ow *connectors.Owner) (string, bool, error) {
	if ow == nil {
		return "", false, nil
	}
	a, ok := o[ow.ID]
	return a, ok, nil
}

// upstream is the service as Reassign sees it: members, transcriptions' authors, and the
// authors it refuses.
type upstream struct {
	members  []api.Member
	authors  map[string]string // transcription id → author e-mail
	refuse   string
	assigned []string
}

func (u *upstream) Members(context.Context) ([]api.Member, error) { return u.members, nil }

func (u *upstream) Get(_ context.Context, id string) (*api.Transcription, error) {
	email, ok := u.authors[id]
	if !ok {
		return nil, api.ErrNotFound
	}
	return &api.Transcription{ID: id, Author: api.Author{Email: email}}, nil
}

func (u *upstream) Assign(_ context.Context, id, author string) (*api.Transcription, error) {
	if author == u.refuse {
		return nil, &api.Error{Status: 422, Code: "author_not_member"}
	}
	u.assigned = append(u.assigned, id+"→"+author)
	return nil, nil
}

// TestReassign: an uploaded job whose owner maps to another member than the transcription's
// author is listed; with apply it is reassigned upstream and on the job (in place, through the
// transition function), a refusal is reported on its line; the same member in another form,
// an unmapped owner and a transcription deleted upstream are left alone.
func TestReassign(t *testing.T) {
	ctx := context.Background()
	s, _ := heldJob(t, bridge.StateHeld)
	recs := []connectors.Recording{}
	for _, item := range []string{"moved", "same", "refused", "unmapped", "deleted"} {
		recs = append(recs, connectors.Recording{ItemID: item, Version: "1", Name: item + ".wav", Owner: &connectors.Owner{Provider: "zoom", ID: "u-" + item}})
	}
	added, err := s.AddRecordings(ctx, "zoom", recs, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range added {
		j := &added[i]
		j.TranscriptionID = "t-" + j.ItemID
		for _, to := range []bridge.State{bridge.StateReady, bridge.StateUploading, bridge.StateQueued, bridge.StateDone} {
			if err := bridge.Move(ctx, s, j, to, "set up", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := owners{"u-moved": "email:sam@acme.test", "u-same": "external:zoom:u-same", "u-refused": "email:gone@acme.test", "u-deleted": "email:sam@acme.test"}
	u := &upstream{members: []api.Member{{ID: "m-sam", Email: "sam@acme.test"}, {ID: "m-ada", Email: "ada@acme.test",
		Identities: []api.Identity{{Provider: "zoom", ExternalID: "u-same"}}}},
		authors: map[string]string{"t-moved": "ada@acme.test", "t-same": "ada@acme.test", "t-refused": "ada@acme.test", "t-unmapped": "ada@acme.test"},
		refuse:  "email:gone@acme.test"}

	dry, err := bridge.Reassign(ctx, s, m, u, "zoom", false, time.Now())
	if err != nil || fmt.Sprint(items(dry)) != "[moved: would refused: would]" || len(u.assigned) != 0 {
		t.Errorf("Reassign(dry run) = %v, %v, assigned %v; want moved and refused listed, nothing assigned", items(dry), err, u.assigned)
	}
	done, err := bridge.Reassign(ctx, s, m, u, "zoom", true, time.Now())
	if err != nil || fmt.Sprint(items(done)) != "[moved: done refused: author_not_member]" || fmt.Sprint(u.assigned) != "[t-moved→email:sam@acme.test]" {
		t.Errorf("Reassign(apply) = %v, %v, assigned %v; want moved done, refused failed", items(done), err, u.assigned)
	}
	for _, j := range added {
		got, _ := s.Job(ctx, j.ID)
		h, _ := s.History(ctx, j.ID)
		last := h[len(h)-1]
		moved := j.ItemID == "moved"
		if got.State != bridge.StateDone || (got.Author == "email:sam@acme.test") != moved || (last.Reason == "reassigned to email:sam@acme.test") != moved {
			t.Errorf("job %s after Reassign = %s author %q, last change %+v; want done, reassigned only if moved", j.ItemID, got.State, got.Author, last)
		}
	}
}

// items says, per reassignment, its item and what became of it.
func items(rs []bridge.Reassignment) []string {
	var out []string
	for _, r := range rs {
		what := "would"
		var e *api.Error
		switch {
		case errors.As(r.Err, &e):
			what = e.Code
		case r.Done:
			what = "done"
		}
		out = append(out, r.ItemID+": "+what)
	}
	return out
}
