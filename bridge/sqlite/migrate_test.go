package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// openHelperEnv names the database file a helper process opens (see TestHelperProcessOpen).
const openHelperEnv = "BRIDGE_TEST_OPEN_HELPER_DB"

// TestHelperProcessOpen is not a test: it is the body of the processes that
// TestConcurrentProcessesOpenAFreshFile starts (the test binary run again). It says it is
// ready, waits for the word on stdin so that every process opens at the same moment, opens the
// store and exits 0, or prints the error and exits 1.
func TestHelperProcessOpen(t *testing.T) {
	path := os.Getenv(openHelperEnv)
	if path == "" {
		return
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "waiting for the start:", err)
		os.Exit(1)
	}
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestConcurrentProcessesOpenAFreshFile: several bridge processes started at once on a new
// database file all open it; the schema is the one a single process creates, in WAL mode, and
// every migration is recorded exactly once.
func TestConcurrentProcessesOpenAFreshFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	if !openAtOnce(t, path, 4) {
		return
	}

	// The same schema as a single process creates.
	single := filepath.Join(t.TempDir(), "single.db")
	s, err := sqlite.Open(context.Background(), single)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got, want := schemaOf(t, path), schemaOf(t, single); !reflect.DeepEqual(got, want) {
		t.Errorf("schema after concurrent opens:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
	if got, want := versionsOf(t, path), allVersionsOnce(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want every migration once: %v", versionTable, got, want)
	}
}

// openAtOnce starts procs processes (the test binary again, see TestHelperProcessOpen) that all
// open the file at path at the same moment, and reports whether every one succeeded (each one
// that did not is a test error).
func openAtOnce(t *testing.T, path string, procs int) bool {
	t.Helper()
	type proc struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		stderr bytes.Buffer
	}
	ps := make([]*proc, procs)
	for i := range ps {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperProcessOpen$")}
		p.cmd.Env = append(os.Environ(), openHelperEnv+"="+path)
		p.cmd.Stderr = &p.stderr
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.stdin.Close(); p.cmd.Process.Kill(); p.cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if line != "ready\n" {
			t.Fatalf("helper process %d said %q (%v) instead of ready; stderr: %s", i, line, err, p.stderr.String())
		}
		ps[i] = p
	}
	for _, p := range ps { // all started and waiting: let them open at once
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	ok := true
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("process %d of %d opening %s: %v: %s", i+1, procs, filepath.Base(path), err, strings.TrimSpace(p.stderr.String()))
			ok = false
		}
	}
	return ok
}

// TestMigrateRecordsEachVersionOnce: opening a migrated file again applies nothing (every
// migration keeps the row and the time it was first recorded with).
func TestMigrateRecordsEachVersionOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	applied := func() []string {
		t.Helper()
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		rows, err := rawDB(t, path).Query(`SELECT id, version_id, is_applied, tstamp FROM ` + versionTable + ` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, v, ok int
			var at string
			if err := rows.Scan(&id, &v, &ok, &at); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(id, v, ok, at))
		}
		return out
	}
	first := applied()
	if again := applied(); len(first) != len(allVersionsOnce()) || !reflect.DeepEqual(first, again) {
		t.Errorf("migrations after reopening = %v, want %v unchanged", again, first)
	}
}

// versionTable is goose's table of applied migrations.
const versionTable = "goose_db_version"

// allVersionsOnce is what versionsOf returns for a database with every embedded migration applied
// once: goose's version 0, then each migration's (numbered in ranges: there may be gaps).
func allVersionsOnce() []string {
	out := []string{"0×1"}
	files, _ := filepath.Glob("migrations/*.sql")
	for _, f := range files {
		out = append(out, strings.TrimLeft(strings.SplitN(filepath.Base(f), "_", 2)[0], "0")+"×1")
	}
	return out
}

// versionsOf lists the migrations recorded in the file at path, each as "version×times".
func versionsOf(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT version_id, COUNT(*) FROM ` + versionTable + ` WHERE is_applied GROUP BY version_id ORDER BY version_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v, n int
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d×%d", v, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// schemaOf lists the database's tables, indexes and their SQL, sorted.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			t.Fatal(err)
		}
		out = append(out, typ+" "+name+": "+strings.Join(strings.Fields(q), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rawDB opens path without the store, for inspection; it is closed when the test ends.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	newer := sqlite.SchemaVersion() + 1
	if _, err := db.Exec(`INSERT INTO `+versionTable+` (version_id, is_applied) VALUES (?, 1)`, newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(ctx, path)
	var se *bridge.SchemaError
	if !errors.As(err, &se) || se.Database != newer || se.Known != sqlite.SchemaVersion() {
		t.Fatalf("Open(schema %d) = %v, want a SchemaError naming %d and %d", newer, err, newer, sqlite.SchemaVersion())
	}
	if !strings.Contains(err.Error(), "newer than this bridge knows") {
		t.Errorf("Open(schema %d) = %q, want it to say the schema is newer", newer, err)
	}
}
