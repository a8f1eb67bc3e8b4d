package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/transcript-bridge/bridge/bridge"
)

// AlertEndpoint implements bridge.EndpointAlertStore: the row and the events in one
// transaction, the events only when the row is new.
func (s *Store) AlertEndpoint(ctx context.Context, a bridge.EndpointAlert, events ...bridge.Event) (bool, error) {
	var marked bool
	err := s.alertTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO endpoint_alerts (name, since, alerted_at, error) VALUES ($1,$2,$3,$4)
			ON CONFLICT (name) DO NOTHING`, a.Name, a.Since.UnixNano(), a.AlertedAt.UnixNano(), a.Error)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if marked = n == 1; err != nil || !marked {
			return err
		}
		for _, e := range events {
			if err := emit(ctx, tx, e, a.AlertedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("alert endpoint %s: %w", a.Name, err)
	}
	return marked, nil
}

// EndpointRecovered implements bridge.EndpointAlertStore.
func (s *Store) EndpointRecovered(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM endpoint_alerts WHERE name = $1`, name)
	if err != nil {
		return false, fmt.Errorf("endpoint %s recovered: %w", name, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// FailingEndpoints implements bridge.EndpointAlertStore.
func (s *Store) FailingEndpoints(ctx context.Context) ([]bridge.EndpointAlert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, since, alerted_at, error FROM endpoint_alerts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("failing endpoints: %w", err)
	}
	defer rows.Close()
	var out []bridge.EndpointAlert
	for rows.Next() {
		var a bridge.EndpointAlert
		var since, at int64
		if err := rows.Scan(&a.Name, &since, &at, &a.Error); err != nil {
			return nil, fmt.Errorf("failing endpoints: %w", err)
		}
		a.Since, a.AlertedAt = fromNanos(since), fromNanos(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// alertTx runs fn in a transaction (retried on a serialization failure).
func (s *Store) alertTx(ctx context.Context, fn func(*sql.Tx) error) error { return s.tx(ctx, fn) }
