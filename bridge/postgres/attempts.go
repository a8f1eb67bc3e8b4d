package postgres

import (
	"context"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// EndpointAttempts implements bridge.DeliveryStore: the attempts read newest first from the end
// of the endpoint's range of delivery_attempts_endpoint, joined to their deliveries, whatever
// those deliveries' states.
func (s *Store) EndpointAttempts(ctx context.Context, endpoint string, limit int) ([]bridge.EndpointAttempt, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT a.at, a.status, a.latency_ms, a.response, a.error, d.id, d.type
		FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE a.endpoint = $1 ORDER BY a.seq DESC LIMIT $2`, endpoint, limit)
	out, err := collect(rows, err, func(r scanner) (bridge.EndpointAttempt, error) {
		var a bridge.EndpointAttempt
		var at int64
		err := r.Scan(&at, &a.Status, &a.Latency, &a.Response, &a.Error, &a.DeliveryID, &a.Type)
		a.At = fromNanos(at)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempts of endpoint %s: %w", endpoint, err)
	}
	return out, nil
}
