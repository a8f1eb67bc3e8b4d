package pgtest_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// TestNew: the database exists and is usable during the test, is not the admin database, and
// is gone after the test's cleanup, even with a connection left open to it.
func TestNew(t *testing.T) {
	ctx := context.Background()
	var dsn, name string
	t.Run("use", func(t *testing.T) {
		dsn = pgtest.New(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: the drop must not wait for it.
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "bridge_test_") {
			t.Fatalf("current_database() = %q, want bridge_test_…", name)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
			t.Fatalf("count = %d, %v; want 2", n, err)
		}
		if other := pgtest.New(t); other == dsn {
			t.Fatalf("two calls returned the same DSN %q", dsn)
		}
	})
	if t.Failed() {
		return
	}
	if name == "" {
		t.SkipNow() // the subtest skipped, saying why
	}
	admin, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after the test", name)
	}
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Errorf("connecting to %s after the test succeeded", dsn)
	}
}

// TestKeywordValueDSN: a keyword/value admin DSN works too.
func TestKeywordValueDSN(t *testing.T) {
	cfg, err := pgx.ParseConfig(os.Getenv(pgtest.EnvDSN))
	if err != nil || os.Getenv(pgtest.EnvDSN) == "" {
		pgtest.New(t) // skips or fails with the usual message
		return
	}
	kv := "host=" + cfg.Host + " port=" + strconv.Itoa(int(cfg.Port)) + " user=" + cfg.User + " dbname=" + cfg.Database + " sslmode=disable"
	if cfg.Password != "" {
		kv += " password=" + cfg.Password
	}
	t.Setenv(pgtest.EnvDSN, kv)
	dsn := pgtest.New(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var name string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil || !strings.HasPrefix(name, "bridge_test_") {
		t.Fatalf("current_database() = %q, %v", name, err)
	}
}

// TestUnavailable: without the variable, or with nothing listening at its address, a test
// skips with one line naming the variable; under CI=true it fails with the same line.
func TestUnavailable(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		pgtest.New(t)
		t.Fatal("New returned without a server")
	}
	for _, c := range []struct{ name, dsn, ci, want string }{
		{"unset", "", "", "--- SKIP"},
		{"unreachable", "postgres://postgres@127.0.0.1:1/test?sslmode=disable", "", "--- SKIP"},
		{"unset under CI", "", "true", "--- FAIL"},
		{"unreachable under CI", "postgres://postgres@127.0.0.1:1/test?sslmode=disable", "true", "--- FAIL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestUnavailable$", "-test.v")
			cmd.Env = append(os.Environ(), "PGTEST_CHILD=1", pgtest.EnvDSN+"="+c.dsn, "CI="+c.ci)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "set "+pgtest.EnvDSN+"=postgres://") {
				t.Fatalf("want %q and the variable named; output:\n%s", c.want, out)
			}
			if strings.Contains(string(out), "New returned") {
				t.Fatalf("New returned without a server:\n%s", out)
			}
		})
	}
}

// TestServer: a cluster of the test's own answers with the settings it was given, refuses
// connections once stopped, and answers again after Start and after Restart (settings and
// data kept).
func TestServer(t *testing.T) {
	if testing.Short() {
		t.Skip("initdb takes seconds")
	}
	s := pgtest.NewServer(t, "fsync=on")
	dsn := pgtest.NewOn(t, s.DSN())
	ctx := context.Background()
	exec := func(q string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, q)
		return err
	}
	fsync := func() string {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err.Error()
		}
		defer conn.Close(ctx)
		var v string
		if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&v); err != nil {
			return err.Error()
		}
		return v
	}
	if got := fsync(); got != "on" {
		t.Errorf("SHOW fsync on NewServer(t, \"fsync=on\") = %s, want on", got)
	}
	if err := exec("CREATE TABLE t (id int)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	s.Stop()
	if err := exec("SELECT 1"); err == nil {
		t.Fatal("SELECT 1 on a stopped server = nil, want an error")
	}
	s.Start()
	if err := exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("insert after Start: %v", err)
	}
	s.Restart()
	if err := exec("INSERT INTO t VALUES (2)"); err != nil {
		t.Fatalf("insert after Restart: %v", err)
	}
	if got := fsync(); got != "on" {
		t.Errorf("SHOW fsync after Restart = %s, want on", got)
	}
}
