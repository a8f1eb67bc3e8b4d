package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/transcript-bridge/bridge/bridge"
)

// Audit implements bridge.AuditStore: one INSERT; the targets are kept as a JSON array.
func (s *Store) Audit(ctx context.Context, e bridge.AuditEntry) error {
	if err := e.Validate(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	targets, err := auditTargets(e.Targets)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO audit_log (at, who, action, targets, detail, error) VALUES ($1,$2,$3,$4,$5,$6)`,
		nanos(e.At), e.Who, e.Action, targets, e.Detail, e.Error); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// AuditLog implements bridge.AuditStore.
func (s *Store) AuditLog(ctx context.Context, limit int) ([]bridge.AuditEntry, error) {
	q := `SELECT id, at, who, action, targets, detail, error FROM audit_log ORDER BY id DESC`
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer rows.Close()
	out := []bridge.AuditEntry{}
	for rows.Next() {
		var e bridge.AuditEntry
		var at int64
		var targets string
		if err := rows.Scan(&e.ID, &at, &e.Who, &e.Action, &targets, &e.Detail, &e.Error); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		e.At = fromNanos(at)
		if err := json.Unmarshal([]byte(targets), &e.Targets); err != nil {
			return nil, fmt.Errorf("audit log: entry %d: targets: %w", e.ID, err)
		}
		if e.Targets == nil {
			e.Targets = []string{}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// auditTargets is ids as the JSON array the audit_log table keeps ("[]" for none).
func auditTargets(ids []string) (string, error) {
	if ids == nil {
		ids = []string{}
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return "", fmt.Errorf("audit targets: %w", err)
	}
	return string(b), nil
}
