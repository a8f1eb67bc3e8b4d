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

// ErrNeedsAuthor is returned by Release without an author for a job that waits for one (held
// unmapped or with its author refused).
var ErrNeedsAuthor = errors.New("it waits for an author: release it with one")

// Release assigns a held job's author by hand (bridge jobs release): the job goes back to
// discovered through Move, its author kept by the mapping, and is uploaded on the next step.
// Without an author it tries a held job again now, as it is: a job held for a reason no author
// settles (a source that refused or kept failing, a setting, the balance) is due at once,
// still held until that try. It fails with ErrNotFound for an unknown id, ErrNotHeld when the
// job is not held, ErrNeedsAuthor when the job waits for an author and none is given, and
// ErrConflict when the job moved meanwhile; author must be email:<address> or user:<uuid>.
func Release(ctx context.Context, s JobStore, id, author string, now time.Time) (*Job, error) {
	if author != "" {
		if err := api.ValidateAuthor(author, true); err != nil {
			return nil, fmt.Errorf("author %q: %w", author, err)
		}
	}
	j, err := s.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.State != StateHeld {
		return nil, fmt.Errorf("job %s is %s, %w", j.ID, j.State, ErrNotHeld)
	}
	if author == "" {
		if j.Hold == HoldUnmapped || j.Hold == HoldAuthorRefused {
			return nil, fmt.Errorf("job %s is held %s: %w", j.ID, j.Hold, ErrNeedsAuthor)
		}
		j.NextAt = time.Time{}
		if err := Move(ctx, s, j, StateHeld, "released by hand: tried again now ("+j.Reason+")", now); err != nil {
			return nil, err
		}
		return j, nil
	}
	j.Author, j.NextAt = author, time.Time{}
	if err := Move(ctx, s, j, StateDiscovered, "released by hand: author "+author, now); err != nil {
		return nil, err
	}
	return j, nil
}
