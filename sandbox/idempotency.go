package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

type idemConflict struct {
	status  int
	code    string
	message string
	retry   int
}

// claimIdempotency returns the stored answer of an earlier success with the key, a conflict
// while it is in flight (or reused for another file), or claims the key for this request.
func (s *Server) claimIdempotency(ctx context.Context, p *principal, u *uploadRequest) (replay *uploadResponse, conflict *idemConflict, err error) {
	now := s.now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var state, fp string
		var resp sql.NullString
		var created int64
		err := tx.QueryRowContext(ctx, `SELECT state, fingerprint, response, created_at FROM idempotency WHERE key_hash = ? AND idem_key = ?`,
			p.keyHash, u.idemKey).Scan(&state, &fp, &resp, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case state == "done" && now.Sub(time.Unix(0, created)) >= idempotencyTTL:
			// Expired: forget it.
		case fp != u.fingerprint():
			conflict = &idemConflict{http.StatusUnprocessableEntity, "idempotency_key_reused", "this Idempotency-Key was used for another file", 0}
			return nil
		case state == "done":
			replay = &uploadResponse{}
			return json.Unmarshal([]byte(resp.String), replay)
		default:
			conflict = &idemConflict{http.StatusConflict, "idempotency_conflict", "a request with this Idempotency-Key is still in flight", 5}
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO idempotency (key_hash, idem_key, state, fingerprint, created_at) VALUES (?,?,?,?,?)`,
			p.keyHash, u.idemKey, "inflight", u.fingerprint(), now.UnixNano())
		return err
	})
	return replay, conflict, err
}
