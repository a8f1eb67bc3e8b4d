package relay

import (
	"context"
	"errors"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// ErrNothingNamed refuses a replay that names no delivery: a replay of every delivery is never
// what is meant.
var ErrNothingNamed = errors.New("no deliveries named: give their ids, an endpoint, a start time or the dead letters")

// CheckReplay refuses (ErrNothingNamed) a replay naming neither ids, nor an endpoint, a start
// time (Since) or a status.
func CheckReplay(ids []string, f bridge.DeliveryFilter) error {
	if len(ids) == 0 && f.Endpoint == "" && f.Since.IsZero() && f.Status == "" {
		return ErrNothingNamed
	}
	return nil
}

// Replay sends deliveries again (bridge deliveries replay): those of ids, or matching f, become
// pending, due at now, keeping their webhook-id, and the running relay sends them. It returns
// how many it changed; a replay naming nothing is refused (CheckReplay).
func Replay(ctx context.Context, s Store, ids []string, f bridge.DeliveryFilter, now time.Time) (int, error) {
	if err := CheckReplay(ids, f); err != nil {
		return 0, err
	}
	return s.Replay(ctx, ids, f, now)
}
