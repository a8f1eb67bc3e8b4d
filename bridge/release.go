package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// ErrNotHeld is returned by Release for a job that is not held.
var ErrNotHeld = errors.New("not held")

// Release assigns a held job's author by hand (bridge jobs release): the job goes back to
// discovered through Move, its author kept by the mapping, and is uploaded on the next step. It
// fails with ErrNotFound for an unknown id, ErrNotHeld when the job is not held, and
// ErrConflict when the job moved meanwhile; author must be email:<address> or user:<uuid>.
func Release(ctx context.Context, s JobStore, id, author string, now time.Time) (*Job, error) {
	if err := api.ValidateAuthor(author, true); err != nil {
		return nil, fmt.Errorf("author %q: %w", author, err)
	}
	j, err := s.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.State != StateHeld {
		return nil, fmt.Errorf("job %s is %s, %w", j.ID, j.State, ErrNotHeld)
	}
	j.Author, j.NextAt = author, time.Time{}
	if err := Move(ctx, s, j, StateDiscovered, "released by hand: author "+author, now); err != nil {
		return nil, err
	}
	return j, nil
}
