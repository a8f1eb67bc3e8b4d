package sandbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// apply writes the seed into an empty database and returns the keys it generated.
func (s *Seed) apply(ctx context.Context, tx *sql.Tx, now time.Time) ([]GeneratedKey, error) {
	var generated []GeneratedKey
	for _, w := range s.Workspaces {
		wsID := orNewID(w.ID)
		l := w.Limits
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, plan, balance_minutes, max_file_size_mb,
			concurrency, max_duration_hours, reports_per_upload, reports_per_day, uploads_per_day, max_queued_files)
			VALUES (?,?,?,?,?,?,?,?,?,?,?)`, wsID, w.Name, w.Plan, w.BalanceMinutes, l.MaxFileSizeMB, l.Concurrency,
			l.MaxDurationHours, l.ReportsPerUpload, l.ReportsPerDay, l.UploadsPerDay, l.MaxQueuedFiles); err != nil {
			return nil, fmt.Errorf("seed workspace %s: %w", w.Name, err)
		}
		ids := map[string]string{}
		for i, m := range w.Members {
			id := orNewID(m.ID)
			ids[strings.ToLower(m.Email)] = id
			active := m.Active == nil || *m.Active
			if _, err := tx.ExecContext(ctx, `INSERT INTO members (id, workspace_id, email, name, role, active, seq)
				VALUES (?,?,?,?,?,?,?)`, id, wsID, m.Email, nullString(m.Name), m.Role, active, i); err != nil {
				return nil, fmt.Errorf("seed member %s: %w", m.Email, err)
			}
			for _, ident := range m.Identities {
				if _, err := tx.ExecContext(ctx, `INSERT INTO identities (workspace_id, member_id, provider, external_id, created_at)
					VALUES (?,?,?,?,?)`, wsID, id, strings.ToLower(ident.Provider), ident.ExternalID, now.UnixNano()); err != nil {
					return nil, fmt.Errorf("seed identity %s:%s: %w", ident.Provider, ident.ExternalID, err)
				}
			}
		}
		for i, p := range w.Projects {
			id := orNewID(p.ID)
			// Later projects are newer, so the list (newest first) shows them in reverse seed order.
			created := now.Add(time.Duration(i-len(w.Projects)) * time.Minute)
			if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?,?,?,?)`,
				id, wsID, p.Name, created.UnixNano()); err != nil {
				return nil, fmt.Errorf("seed project %s: %w", p.Name, err)
			}
			for _, pm := range p.Members {
				if _, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, member_id, role) VALUES (?,?,?)`,
					id, ids[strings.ToLower(pm.Email)], pm.Role); err != nil {
					return nil, fmt.Errorf("seed project member %s: %w", pm.Email, err)
				}
			}
		}
		for _, p := range w.Prompts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO prompts (workspace_id, slug, name, scope, owner_id, draft, fails)
				VALUES (?,?,?,?,?,?,?)`, wsID, p.Slug, p.Name, p.Scope, ids[strings.ToLower(p.Owner)], p.Draft, p.Fails); err != nil {
				return nil, fmt.Errorf("seed prompt %s: %w", p.Slug, err)
			}
		}
		for _, k := range w.Keys {
			secret := k.Key
			if secret == "" {
				secret = generateKey()
				generated = append(generated, GeneratedKey{Workspace: w.Name, Member: k.Member, Key: secret})
			}
			kind := "api_key"
			if !strings.HasPrefix(secret, keyPrefix) {
				kind = "oauth"
			}
			var exp any
			if k.ExpiresAt != nil {
				exp = k.ExpiresAt.UnixNano()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (hash, last4, kind, workspace_id, member_id, scopes, expires_at, revoked)
				VALUES (?,?,?,?,?,?,?,?)`, hashKey(secret), last4(secret), kind, wsID, ids[strings.ToLower(k.Member)],
				strings.Join(k.Scopes, " "), exp, k.Revoked); err != nil {
				return nil, fmt.Errorf("seed key for %s: %w", k.Member, err)
			}
		}
	}
	return generated, nil
}

func generateKey() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return keyPrefix + hex.EncodeToString(b)
}

func orNewID(id string) string {
	if id == "" {
		return uuid.NewString()
	}
	return strings.ToLower(id)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
