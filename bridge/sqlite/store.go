// Package sqlite is the embedded default Store of the bridge: one SQLite file (go-sqlite3) in WAL
// mode with a busy timeout, one writer connection, and embedded goose migrations (migrate.go) that
// processes opening the same new file at once apply exactly once, without colliding.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/mattn/go-sqlite3" // the SQLite driver, and its error codes

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
)

// Store is the SQLite Store.
type Store struct {
	db *sql.DB
	// path is the database file, named by the errors of writes refused for want of space.
	path string
	// emitted is set by a transaction that wrote events; its commit then nudges the bus
	// subscribers made by Bus (subs), which read them at once instead of at their next poll.
	// Transactions run one at a time (one connection), so the flag is the running one's.
	emitted atomic.Bool
	subs    struct {
		sync.Mutex
		list []*bus.Subscriber
	}
}

var _ bridge.Store = (*Store)(nil)

// Open opens (creating when needed) the database file at path and migrates it. It fails with
// an error naming the path.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := create(path); err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	// No _journal_mode in the DSN: WAL is a property of the file, set once by wal below, where a
	// race between processes opening a new file is retried instead of failing the connection.
	// The path is a URI's: '%', '?' and '#' in it are escaped, or SQLite opens another file
	// (cut at the '#') than the one named.
	dsn := "file:" + uriPath.Replace(path) + "?_busy_timeout=" + strconv.Itoa(int(busyTimeout/time.Millisecond)) +
		"&_foreign_keys=on&_txlock=immediate&_synchronous=FULL&_stmt_cache_size=64"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	// One connection: SQLite has one writer; this keeps our own goroutines from SQLITE_BUSY.
	// Transactions are short and never span an HTTP call.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	if err := s.wal(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// busyTimeout is how long a statement waits for another connection's (or process's) lock
// before it fails with "database is locked".
const busyTimeout = 10 * time.Second

// wal puts the database file in WAL mode (it stays so: the mode is stored in the file). Several
// processes opening a brand-new file at once race to switch it, and SQLite can answer the
// losers "database is locked" without waiting on the busy timeout; they try again, for up to
// busyTimeout, and then find the file in WAL mode already.
func (s *Store) wal(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var mode string
		err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		switch {
		case err == nil && (mode == "wal" || mode == "memory"): // an in-memory database has no WAL
			return nil
		case err == nil:
			return fmt.Errorf("set WAL mode: the database stays in %s mode", mode)
		case !isBusy(err) || time.Now().After(deadline):
			return fmt.Errorf("set WAL mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("set WAL mode: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// patient runs fn, a short write an operator makes (an endpoint paused or resumed, a replay),
// again while SQLite answers "database is locked", up to patientTries times: a bridge in another
// process committing back to back under a backlog leaves the lock free only for moments between
// its transactions, and SQLite's busy handler, polling at up to 100 ms, can miss every one of
// them for the whole busy timeout. It returns fn's last error.
func patient(ctx context.Context, fn func() error) error {
	var err error
	for range patientTries {
		if err = fn(); !isBusy(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// patientTries is how many busy timeouts an operator's write waits through in all.
const patientTries = 3

// isBusy reports whether err is SQLite's "database is locked" (SQLITE_BUSY) or "database table
// is locked" (SQLITE_LOCKED).
func isBusy(err error) bool {
	var e sqlite3.Error
	return errors.As(err, &e) && (e.Code == sqlite3.ErrBusy || e.Code == sqlite3.ErrLocked)
}

// tx runs fn in one transaction, committed when fn returns nil and rolled back otherwise; it
// returns fn's error or the commit's. A committed transaction that wrote events nudges the
// store's bus subscribers (Bus), so they read them at once.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.noSpace(err)
	}
	if err := fn(tx); err != nil {
		s.emitted.Store(false) // before the rollback frees the connection for the next
		tx.Rollback()
		return s.noSpace(err)
	}
	emitted := s.emitted.Swap(false) // before the commit frees the connection for the next
	err = tx.Commit()
	if emitted && err == nil {
		s.subs.Lock()
		for _, sub := range s.subs.list {
			sub.Nudge()
		}
		s.subs.Unlock()
	}
	return s.noSpace(err)
}

// noSpace returns err as a *bridge.NoSpaceError naming the database file when SQLite refused
// the write for want of space (SQLITE_FULL, or an I/O error whose errno is ENOSPC, EDQUOT or
// EFBIG): a full disk rolls the transaction back and leaves the file intact, and the caller
// tries again once space is freed. Other errors are returned unchanged.
func (s *Store) noSpace(err error) error {
	var e sqlite3.Error
	if errors.As(err, &e) && (e.Code == sqlite3.ErrFull || bridge.IsNoSpaceErrno(e.SystemErrno)) {
		return &bridge.NoSpaceError{Path: s.path, Err: err}
	}
	return bridge.NoSpace(s.path, err)
}

const jobCols = `id, recording, state, reason, hold, author, external_id, metadata, idempotency_key, attempt_at, attempts,
	transcription_id, required_minutes, next_at, created_at, updated_at, revision`

func scanJob(row interface{ Scan(...any) error }) (*bridge.Job, error) {
	var j bridge.Job
	var rec, meta string
	var attemptAt, nextAt, created, updated int64
	if err := row.Scan(&j.ID, &rec, &j.State, &j.Reason, &j.Hold, &j.Author, &j.ExternalID, &meta, &j.IdempotencyKey, &attemptAt,
		&j.Attempts, &j.TranscriptionID, &j.RequiredMinutes, &nextAt, &created, &updated, &j.Revision); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(rec), &j.Recording); err != nil {
		return nil, fmt.Errorf("job %s: recording: %w", j.ID, err)
	}
	if meta != "" {
		j.Metadata = json.RawMessage(meta)
	}
	j.AttemptAt, j.NextAt = fromNanos(attemptAt), fromNanos(nextAt)
	j.CreatedAt, j.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &j, nil
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// AddRecordings implements bridge.JobStore: an INSERT that does nothing on either unique key,
// (source, item, version) or the recording's dedupe key (migration 0013); a recording a
// tombstone names (its source item, any version, or its dedupe key) is left out.
func (s *Store) AddRecordings(ctx context.Context, source string, recs []connectors.Recording, cursor string, now time.Time) ([]bridge.Job, error) {
	var added []bridge.Job
	err := s.tx(ctx, func(tx *sql.Tx) error {
		added = added[:0]
		for _, r := range recs {
			r.Source = source
			// Time-ordered ids: new jobs' rows and index entries (here and in deliveries') land
			// together at the end of their B-trees instead of on random pages.
			j := bridge.Job{ID: uuid.Must(uuid.NewV7()).String(), Recording: r, State: bridge.StateDiscovered, CreatedAt: now.UTC(), UpdatedAt: now.UTC(), Revision: 1}
			rec, _ := json.Marshal(r)
			if gone, err := tombstoned(ctx, tx, source, r.ItemID, r.DedupeKey); err != nil || gone {
				if err != nil {
					return fmt.Errorf("add %s %s: tombstones: %w", source, r.ItemID, err)
				}
				continue // forgotten: never stored again
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, source, item_id, version, recording, state, created_at, updated_at)
				VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`,
				j.ID, source, r.ItemID, r.Version, string(rec), j.State, now.UnixNano(), now.UnixNano())
			if err != nil {
				return fmt.Errorf("add %s %s: %w", source, r.ItemID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO job_history (job_id, from_state, to_state, reason, at) VALUES (?,?,?,?,?)`,
					j.ID, "", j.State, "found by "+source, now.UnixNano()); err != nil {
					return err
				}
				added = append(added, j)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO cursors (source, cursor, updated_at) VALUES (?,?,?)
			ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`, source, cursor, now.UnixNano())
		return err
	})
	return added, err
}

// Cursor implements bridge.JobStore.
func (s *Store) Cursor(ctx context.Context, source string) (string, error) {
	var c string
	err := s.db.QueryRowContext(ctx, `SELECT cursor FROM cursors WHERE source = ?`, source).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return c, err
}

// Update implements bridge.JobStore.
func (s *Store) Update(ctx context.Context, j *bridge.Job, from bridge.State, reason string, events ...bridge.Event) error {
	now := j.UpdatedAt
	if now.IsZero() {
		now = time.Now().UTC()
	}
	rec, _ := json.Marshal(j.Recording)
	var committed int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res := tx.QueryRowContext(ctx, `UPDATE jobs SET recording = ?, state = ?, reason = ?, hold = ?, author = ?, external_id = ?, metadata = ?,
			idempotency_key = ?, attempt_at = ?, attempts = ?, transcription_id = ?, required_minutes = ?, next_at = ?, updated_at = ?,
			revision = revision + 1
			WHERE id = ? AND state = ? AND (? = 0 OR revision = ?) RETURNING revision`, string(rec), j.State, j.Reason, j.Hold, j.Author,
			j.ExternalID, string(j.Metadata), j.IdempotencyKey, nanos(j.AttemptAt), j.Attempts, j.TranscriptionID, j.RequiredMinutes,
			nanos(j.NextAt), now.UnixNano(), j.ID, from, j.Revision, j.Revision)
		var revision int64
		err := res.Scan(&revision)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("update job %s from %s (revision %d): %w", j.ID, from, j.Revision, bridge.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("update job %s: %w", j.ID, err)
		}
		if from != j.State || reason != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO job_history (job_id, from_state, to_state, reason, at) VALUES (?,?,?,?,?)`,
				j.ID, from, j.State, reason, now.UnixNano()); err != nil {
				return err
			}
		}
		for _, e := range events {
			if err := s.emit(ctx, tx, e, now); err != nil {
				return err
			}
		}
		committed = revision
		return nil
	})
	if err == nil {
		j.Revision = committed
	}
	return err
}

// Job implements bridge.JobStore.
func (s *Store) Job(ctx context.Context, id string) (*bridge.Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %s: %w", id, bridge.ErrNotFound)
	}
	return j, err
}

// Jobs implements bridge.JobStore.
func (s *Store) Jobs(ctx context.Context, f bridge.JobFilter) ([]bridge.Job, error) {
	var where []string
	var args []any
	if len(f.States) > 0 {
		where = append(where, "state IN ("+marks(len(f.States))+")")
		for _, st := range f.States {
			args = append(args, st)
		}
	}
	if f.Source != "" {
		where, args = append(where, "source = ?"), append(args, f.Source)
	}
	if !f.DueBefore.IsZero() {
		where, args = append(where, "next_at <= ?"), append(args, f.DueBefore.UnixNano())
	}
	if f.Query != "" {
		cond, qargs := jobQuery(f.Query)
		where, args = append(where, cond), append(args, qargs...)
	}
	q := `SELECT ` + jobCols + ` FROM jobs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, rowid" // oldest first, ties in insertion order
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []bridge.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *j)
	}
	return out, rows.Err()
}

// History implements bridge.JobStore.
func (s *Store) History(ctx context.Context, id string) ([]bridge.Change, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT from_state, to_state, reason, at FROM job_history WHERE job_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	defer rows.Close()
	var out []bridge.Change
	for rows.Next() {
		c := bridge.Change{JobID: id}
		var at int64
		if err := rows.Scan(&c.From, &c.To, &c.Reason, &at); err != nil {
			return nil, err
		}
		c.At = fromNanos(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Counts implements bridge.JobStore.
func (s *Store) Counts(ctx context.Context) (map[bridge.State]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[bridge.State]int{}
	for rows.Next() {
		var st bridge.State
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// InstanceID implements bridge.JobStore.
func (s *Store) InstanceID(ctx context.Context) (string, error) {
	id := uuid.NewString()
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('instance_id', ?) ON CONFLICT (key) DO NOTHING`, id); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'instance_id'`).Scan(&id)
	})
	return id, err
}
