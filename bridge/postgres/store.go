// Package postgres is the scale-out Store of the bridge: the store contract (bridge.Store) on a
// PostgreSQL server (15 or later) that several replicas share, through pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib), plain SQL and explicit scans. It passes bridge/storetest
// unchanged, as bridge/sqlite does, and keeps the same schema version for version: embedded goose
// migrations with the numbers and names of SQLite's (migrate.go), applied once however many
// replicas start at once.
//
// Times are BIGINT Unix nanoseconds, 0 for none, as in SQLite: scans stay int64, a time.Time
// comes back to the nanosecond (timestamptz keeps microseconds, so a time written and read back
// would no longer be Equal to itself), and a copy between the two stores moves numbers as they
// are.
//
// Transactions run at READ COMMITTED, PostgreSQL's default. Every compare-and-set is one
// conditional statement whose row lock serializes the writers: a second writer waits for the
// first to commit and then evaluates its WHERE against the committed row (Update's state and
// version, ClaimRun's INSERT … ON CONFLICT DO UPDATE … WHERE, Lease, NoteMappingChange's
// generation + 1). Unique keys make a second insert a no-op (AddRecordings on source, item and
// version; FanOut on event and endpoint), and Claim takes deliveries with SELECT … FOR UPDATE
// SKIP LOCKED, so claimers on any number of connections or replicas share the due deliveries and
// never lease one twice. A transaction that PostgreSQL aborts as a deadlock victim or as a
// serialization failure (40P01, 40001: two AddRecordings inserting the same keys in different
// orders) is run again from the start, a few times (see tx).
//
// The transactional outbox: every write that reports an event inserts it into the outbox and
// publishes its EventRef on bridge.EventsTopic with watermill-sql v4's Publisher on the same
// transaction (events.go); (*Store).Bus reads it (package bus).
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/transcript-bridge/bridge/bridge"
)

// Store is the PostgreSQL Store.
type Store struct {
	db *sql.DB
	// busDB is the bus subscribers' pool: its sessions commit without waiting for the WAL
	// flush (asyncCommits).
	busDB *sql.DB
	// where names the database in errors: host:port/dbname, never the password.
	where string
}

var _ bridge.Store = (*Store)(nil)

// Open connects to the database that dsn names (a postgres:// URL or keyword/value DSN, as pgx
// reads them) and migrates it. It fails with an error naming the server and database (never
// the password) when the DSN cannot be read, the server cannot be reached, or a migration fails.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgconn's parse errors redact the password.
		return nil, fmt.Errorf("store postgres: %w", err)
	}
	where := where(cfg.Config)
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(customPlans))
	// Transactions are short and never span an HTTP call; a few idle connections save the
	// handshake between them. The bus's subscriber holds one connection per subscription while
	// a handler runs, so the pool is not bounded here.
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	busDB := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(asyncCommits))
	busDB.SetMaxIdleConns(4)
	busDB.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{db: db, busDB: busDB, where: where}
	if err := db.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	return s, nil
}

// asyncCommits sets up a connection of the bus subscribers' pool: customPlans, and
// synchronous_commit off, so a read's and an ack's commit do not wait for the WAL to reach the
// disk. An ack is written after its event's fan-out has committed (and waited for the flush),
// so one lost with the log's last moments in a crash of the server only has its message read
// and fanned out again, which the deliveries' unique keys make a no-op. The events themselves
// are committed by the pipeline's transactions, which wait as always. On this machine an
// event's two flushes (its fan-out's and its ack's) bounded the relay on PostgreSQL
// (BENCHMARKS.md).
func asyncCommits(ctx context.Context, c *pgx.Conn) error {
	if err := customPlans(ctx, c); err != nil {
		return err
	}
	if _, err := c.Exec(ctx, `SET synchronous_commit = off`); err != nil {
		return fmt.Errorf("set synchronous_commit: %w", err)
	}
	return nil
}

// customPlans asks PostgreSQL, on a new connection, for plans made for each statement's
// values (plan_cache_mode = force_custom_plan) unless the setting is not the default (set for
// the role or the database, or in the DSN's options): pgx prepares and caches every statement,
// and after five runs PostgreSQL may plan one for any values (a generic plan), with which the
// relay's claim, whose time bounds decide how much of an index to read, cost 1.6 times as much
// per delivery (BenchmarkGroupCommit/leased=search). A plain SET, not a startup parameter, so
// poolers that refuse unknown startup parameters (PgBouncer) accept it.
func customPlans(ctx context.Context, c *pgx.Conn) error {
	var mode string
	if err := c.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("read plan_cache_mode: %w", err)
	}
	if mode != "auto" {
		return nil
	}
	if _, err := c.Exec(ctx, `SET plan_cache_mode = force_custom_plan`); err != nil {
		return fmt.Errorf("set plan_cache_mode: %w", err)
	}
	return nil
}

// Close closes the connection pools. It returns their errors, if any.
func (s *Store) Close() error { return errors.Join(s.db.Close(), s.busDB.Close()) }

// maxAttempts bounds how often tx runs a transaction that PostgreSQL aborted as a deadlock
// victim or a serialization failure.
const maxAttempts = 5

// tx runs fn in a READ COMMITTED transaction and commits it, or rolls it back when fn fails. A
// transaction aborted with 40P01 or 40001 runs again, from the start, after a short random
// wait, up to maxAttempts times in all: fn must start from scratch each time.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.once(ctx, fn)
		if err == nil || attempt == maxAttempts || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(rand.N(5*attempt)+1) * time.Millisecond):
		}
	}
}

func (s *Store) once(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// retryable reports whether err is PostgreSQL aborting a transaction that may succeed when run
// again: a serialization failure (40001) or a deadlock (40P01).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
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

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// collect scans every row of rows with scan, closing rows; it fails on the query's, a scan's or
// the iteration's error.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
