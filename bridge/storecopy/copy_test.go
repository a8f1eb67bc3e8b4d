package storecopy

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// sides are the directions a test copies in: SQLite to SQLite runs everywhere; the others need
// PostgreSQL (pgtest).
var sides = []struct {
	name     string
	from, to func(t *testing.T) *Database
}{
	{"sqlite to postgres", func(t *testing.T) *Database { return openSQLite(t, "from.db") }, openPostgres},
	{"sqlite to sqlite", func(t *testing.T) *Database { return openSQLite(t, "from.db") }, func(t *testing.T) *Database { return openSQLite(t, "to.db") }},
	{"postgres to sqlite", openPostgres, func(t *testing.T) *Database { return openSQLite(t, "to.db") }},
	{"postgres to postgres", openPostgres, openPostgres},
}

// TestCopyKeepsEverythingTheContractReads: a populated store copied to an empty one reads the
// same through the whole contract (jobs and revisions, history, cursors, pending events,
// deliveries and attempts, disabled endpoints, runs, checkpoint, exported ids, instance id,
// mapping generation); every table verifies; leases stay behind; the pending events are on the
// destination's bus, in order.
func TestCopyKeepsEverythingTheContractReads(t *testing.T) {
	for _, side := range sides {
		t.Run(side.name, func(t *testing.T) {
			ctx := context.Background()
			from, to := side.from(t), side.to(t)
			populate(t, from.Store())
			want := state(t, from.Store())
			var progress []string
			report, err := Copy(ctx, from, to, Options{Batch: 3, Progress: func(table string, _ int64) { progress = append(progress, table) }})
			if err != nil {
				t.Fatalf("Copy(%s, %s) = %v, want nil", from, to, err)
			}
			sameState(t, state(t, to.Store()), want)
			checkReport(t, report)
			if len(progress) != len(Tables) {
				t.Errorf("Progress was called for %v, want every table", progress)
			}
			leases, err := to.Store().Leases(ctx)
			must(t, err)
			if len(leases) != 0 {
				t.Errorf("Leases of the destination = %v, want none (leases are not copied)", leases)
			}
			pending, err := from.Store().PendingEvents(ctx, 100)
			must(t, err)
			if report.Republished != len(pending) || len(pending) == 0 {
				t.Errorf("Republished = %d, want the %d pending events", report.Republished, len(pending))
			}
			got := busRefs(t, to, len(pending))
			for i, e := range pending {
				if want := (bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID, TranscriptionID: e.TranscriptionID}); got[i] != want {
					t.Errorf("bus message %d = %+v, want %+v", i, got[i], want)
				}
			}
		})
	}
}

// checkReport fails unless every table is in the report, verified.
func checkReport(t *testing.T, r *Report) {
	t.Helper()
	if len(r.Tables) != len(Tables) || !r.OK() {
		t.Fatalf("report = %+v, want every table ok", r.Tables)
	}
	for _, c := range r.Tables {
		if c.Rows == 0 {
			t.Errorf("table %s: 0 rows copied: populate writes some of everything", c.Table)
		}
	}
}

// TestCopyThenContinue: after a copy, the destination's stores number new rows past the copied
// ones (PostgreSQL's identities moved on), lists new jobs after the copied ones (SQLite's rowid
// order kept as PostgreSQL's seq and back), and counts job revisions on from the copied ones.
func TestCopyThenContinue(t *testing.T) {
	for _, side := range sides {
		t.Run(side.name, func(t *testing.T) {
			ctx := context.Background()
			from, to := side.from(t), side.to(t)
			populate(t, from.Store())
			_, err := Copy(ctx, from, to, Options{})
			must(t, err)
			s := to.Store()
			before, err := s.Jobs(ctx, bridge.JobFilter{})
			must(t, err)
			added, err := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "late.wav", Version: "v1", Name: "late.wav"}}, "c2", t0)
			must(t, err)
			after, err := s.Jobs(ctx, bridge.JobFilter{})
			must(t, err)
			if len(after) != len(before)+1 || after[len(after)-1].ID != added[0].ID {
				t.Errorf("Jobs after AddRecordings: the new job is not last (ties of created_at in insertion order)")
			}
			j := before[2] // queued
			rev := j.Revision
			j.State, j.UpdatedAt = bridge.StateProcessing, t0.Add(time.Hour)
			must(t, s.Update(ctx, &j, bridge.StateQueued, "processing", bridge.NewEvent(bridge.EventReportCompleted, &j, nil)))
			if j.Revision != rev+1 {
				t.Errorf("revision after Update = %d, want %d", j.Revision, rev+1)
			}
			pending, err := s.PendingEvents(ctx, 100)
			must(t, err)
			last := pending[len(pending)-1]
			if last.JobID != j.ID || last.ID <= pending[len(pending)-2].ID {
				t.Errorf("new event %+v: not numbered after the copied ones (%d)", last, pending[len(pending)-2].ID)
			}
		})
	}
}

// TestCopyRefusesADestinationWithState: a destination holding any state (a job, only the
// instance id, a mapping change, a lease) is refused with ErrNotEmpty naming the tables, and
// nothing is written to it.
func TestCopyRefusesADestinationWithState(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write func(s bridge.Store) error
		table string
	}{
		{"a job", func(s bridge.Store) error {
			_, err := s.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "a", Version: "1", Name: "a.wav"}}, "c", t0)
			return err
		}, "jobs 1"},
		{"the instance id", func(s bridge.Store) error { _, err := s.InstanceID(ctx); return err }, "meta 1"},
		{"a mapping change", func(s bridge.Store) error { _, err := s.NoteMappingChange(ctx, "x", t0); return err }, "mapping_changes 1"},
		{"a lease", func(s bridge.Store) error { _, err := s.Lease(ctx, "tracker", "r", t0, time.Minute); return err }, "leases 1"},
	}
	for _, side := range sides[:2] {
		for _, tc := range tests {
			t.Run(side.name+"/"+tc.name, func(t *testing.T) {
				from, to := side.from(t), side.to(t)
				populate(t, from.Store())
				must(t, tc.write(to.Store()))
				before := state(t, to.Store())
				report, err := Copy(ctx, from, to, Options{})
				var ne *NotEmptyError
				if !errors.Is(err, ErrNotEmpty) || !errors.As(err, &ne) || report != nil {
					t.Fatalf("Copy(%s) = %v, %v, want ErrNotEmpty", tc.name, report, err)
				}
				if !strings.Contains(err.Error(), tc.table) || !strings.Contains(err.Error(), to.String()) {
					t.Errorf("Copy(%s) = %q, want it to name %s and %q", tc.name, err, to, tc.table)
				}
				sameState(t, state(t, to.Store()), before)
			})
		}
	}
}

// TestCopyRefusesTheSameDatabase: a SQLite file copied onto itself, under two spellings.
func TestCopyRefusesTheSameDatabase(t *testing.T) {
	ctx := context.Background()
	a := openSQLite(t, "a.db")
	path := strings.TrimPrefix(a.String(), "sqlite ")
	b, err := Open(ctx, path, true)
	must(t, err)
	defer b.Close()
	if _, err := Copy(ctx, a, b, Options{}); err == nil || !strings.Contains(err.Error(), "both the source and the destination") {
		t.Errorf("Copy(%s, %s) = %v, want a refusal", a, b, err)
	}
}

// TestVerifyReportsATamperedDestination: a row changed, added or removed on one side after a
// copy makes Verify fail with ErrMismatch, the table named and only it not ok.
func TestVerifyReportsATamperedDestination(t *testing.T) {
	tests := []struct {
		name, table, sql string
	}{
		{"a changed value", "jobs", `UPDATE jobs SET reason = reason || '.' WHERE state = 'held'`},
		{"a changed float", "delivery_attempts", `UPDATE delivery_attempts SET latency_ms = latency_ms + 0.000001`},
		{"a removed row", "export_items", `DELETE FROM export_items WHERE transcription_id = 'tr-1'`},
		{"a null set", "outbox", `UPDATE outbox SET delivered_at = NULL WHERE id = 1`},
		{"a row added", "cursors", `INSERT INTO cursors (source, cursor, updated_at) VALUES ('s3', 'x', 1)`},
	}
	for _, side := range sides[:2] {
		ctx := context.Background()
		from, to := side.from(t), side.to(t)
		populate(t, from.Store())
		_, err := Copy(ctx, from, to, Options{})
		must(t, err)
		for _, tc := range tests {
			t.Run(side.name+"/"+tc.name, func(t *testing.T) {
				tx, err := to.DB().BeginTx(ctx, nil)
				must(t, err)
				defer tx.Rollback()
				_, err = tx.ExecContext(ctx, tc.sql)
				must(t, err)
				report, err := verify(ctx, from.DB(), from.dialect, tx, to.dialect)
				must(t, err)
				var bad []string
				for _, c := range report.Tables {
					if !c.OK {
						bad = append(bad, c.Table)
					}
				}
				if !slices.Equal(bad, []string{tc.table}) {
					t.Errorf("verify after %s = %v not ok, want [%s]", tc.name, bad, tc.table)
				}
			})
		}
		report, err := Verify(ctx, from, to)
		if err != nil || !report.OK() {
			t.Errorf("Verify of the untouched copy = %v, want nil", err)
		}
		_, err = to.DB().ExecContext(ctx, `UPDATE meta SET value = 'other' WHERE key = 'instance_id'`)
		must(t, err)
		if _, err := Verify(ctx, from, to); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "meta") {
			t.Errorf("Verify with another instance id = %v, want ErrMismatch naming meta", err)
		}
	}
}

// TestCopyRollsBackOnAMismatch: when the copy does not verify, nothing is committed: the
// destination stays empty, so the copy can run again.
func TestCopyRollsBackOnAMismatch(t *testing.T) {
	for _, side := range sides[:2] {
		t.Run(side.name, func(t *testing.T) {
			ctx := context.Background()
			from, to := side.from(t), side.to(t)
			populate(t, from.Store())
			tamper := func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `UPDATE deliveries SET webhook_id = 'msg_other' WHERE status = 'delivered'`)
				return err
			}
			report, err := Copy(ctx, from, to, Options{afterCopy: tamper})
			if !errors.Is(err, ErrMismatch) || report == nil || report.OK() {
				t.Fatalf("Copy with a tampered row = %v, want ErrMismatch with the report", err)
			}
			for _, c := range report.Tables {
				if c.OK == (c.Table == "deliveries") {
					t.Errorf("table %s: ok = %v", c.Table, c.OK)
				}
			}
			held, err := contents(ctx, to.DB())
			must(t, err)
			if len(held) != 0 {
				t.Fatalf("destination after a failed copy holds %v, want nothing", held)
			}
			if _, err := Copy(ctx, from, to, Options{}); err != nil {
				t.Fatalf("Copy again = %v, want nil", err)
			}
		})
	}
}
