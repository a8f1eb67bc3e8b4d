package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
	const procs = 4
	path := filepath.Join(t.TempDir(), "bridge.db")
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
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("process %d of %d opening a fresh file: %v: %s", i+1, procs, err, strings.TrimSpace(p.stderr.String()))
		}
	}
	if t.Failed() {
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
		t.Errorf("schema after %d concurrent opens:\n%s\nwant:\n%s", procs, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
	got, want := versionsOf(t, path), versionsOf(t, single)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("schema_migrations = %v, want every migration once: %v", got, want)
	}
}

// TestMigrateRecordsEachVersionOnce: opening a migrated file again applies nothing (every
// migration keeps the time it was first applied).
func TestMigrateRecordsEachVersionOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	applied := func() map[int]int64 {
		t.Helper()
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		rows, err := rawDB(t, path).Query(`SELECT version, applied_at FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int]int64{}
		for rows.Next() {
			var v int
			var at int64
			if err := rows.Scan(&v, &at); err != nil {
				t.Fatal(err)
			}
			out[v] = at
		}
		return out
	}
	first := applied()
	if again := applied(); len(first) == 0 || !reflect.DeepEqual(first, again) {
		t.Errorf("migrations after reopening = %v, want %v unchanged", again, first)
	}
}

// versionsOf lists the migrations recorded in the file at path, each as "version×times".
func versionsOf(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT version, COUNT(*) FROM schema_migrations GROUP BY version ORDER BY version`)
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
