package sqlite

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
		WHERE a.endpoint = ? ORDER BY a.seq DESC LIMIT ?`, endpoint, limit)
	if err != nil {
		return nil, fmt.Errorf("attempts of endpoint %s: %w", endpoint, err)
	}
	defer rows.Close()
	var out []bridge.EndpointAttempt
	for rows.Next() {
		var a bridge.EndpointAttempt
		var at int64
		if err := rows.Scan(&at, &a.Status, &a.Latency, &a.Response, &a.Error, &a.DeliveryID, &a.Type); err != nil {
			return nil, fmt.Errorf("attempts of endpoint %s: %w", endpoint, err)
		}
		a.At = fromNanos(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts of endpoint %s: %w", endpoint, err)
	}
	return out, nil
}
