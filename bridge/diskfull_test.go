package bridge_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/internal/tmpfstest"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// syncBuffer is a log sink the pipeline's goroutines may write to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDiskFullStopsNewWorkAndResumes: the embedded default (a SQLite store, a local folder)
// with its database on a 4 MiB tmpfs. Once the file system is full, new recordings are not
// taken: the pipeline reports (DiskFull) and logs once an error naming the database file, the
// database stays intact (PRAGMA integrity_check), and once the filler is removed, the bridge
// takes the waiting recordings by itself and finishes them.
func TestDiskFullStopsNewWorkAndResumes(t *testing.T) {
	fs := tmpfstest.Mount(t, 4<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sb := sandboxtest.Start(t)
	dbPath := filepath.Join(fs, "bridge.db")
	store, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, HTTPClient: sandboxtest.HTTPClient(t, nil),
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 30, DataPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	inbox := t.TempDir()
	src, err := localdir.New(localdir.Config{Path: inbox})
	if err != nil {
		t.Fatal(err)
	}
	instance, _ := store.InstanceID(ctx)
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:sam@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	p := &bridge.Pipeline{Store: store, API: client, Instance: instance, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m}}}
	done := make(chan error, 1)
	go func() {
		done <- p.Run(ctx, bridge.RunOptions{Schedules: map[string]string{"inbox": "@every 1s"},
			StepInterval: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	}()
	staging := filepath.Join(filepath.Dir(inbox), "staging")
	if err := os.Mkdir(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(from, to int) {
		for i := from; i < to; i++ {
			// Written beside and renamed in: a scan never sees a file half-written.
			name := fmt.Sprintf("call-%02d.wav", i)
			if err := os.WriteFile(filepath.Join(staging, name), wav(1, uint64(i+1)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(staging, name), filepath.Join(inbox, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 3)
	waitFor(t, "the first 3 recordings done", func() bool { return countDone(t, store) == 3 })

	// The WAL emptied first: a WAL that a checkpoint rewinds keeps its size, and writes into
	// it would need no new space for a while.
	checkpoint(t, dbPath)
	filler := tmpfstest.Fill(t, fs, 0)
	put(3, 8)
	waitFor(t, "the pipeline to report the disk full", func() bool { return p.DiskFull() != nil })
	full := p.DiskFull()
	if !errors.Is(full, bridge.ErrNoSpace) || !strings.Contains(full.Error(), dbPath) {
		t.Errorf("DiskFull() = %v, want an error naming %q", full, dbPath)
	}
	// A few more scans while full: still nothing taken, still one error logged.
	time.Sleep(2500 * time.Millisecond)
	if jobs, _ := store.Jobs(ctx, bridge.JobFilter{}); len(jobs) != 3 {
		t.Errorf("jobs while the disk is full = %d, want 3 (no new work taken); log:\n%s", len(jobs), logs.String())
	}
	if n := strings.Count(logs.String(), "level=ERROR msg=\"disk full"); n != 1 {
		t.Errorf("disk-full errors logged = %d, want 1 per outage; log:\n%s", n, logs.String())
	}
	if got := integrity(t, dbPath); got != "ok" {
		t.Errorf("PRAGMA integrity_check while full = %q, want ok", got)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all 8 recordings done after space is freed", func() bool { return countDone(t, store) == 8 })
	if err := p.DiskFull(); err != nil {
		t.Errorf("DiskFull() after space was freed = %v, want nil", err)
	}
	if !strings.Contains(logs.String(), "space freed") {
		t.Errorf("no \"space freed\" line logged:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if got := integrity(t, dbPath); got != "ok" {
		t.Errorf("PRAGMA integrity_check after = %q, want ok", got)
	}
}

// waitFor polls cond every 50 ms for up to a minute, failing t with what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countDone(t *testing.T, store *sqlite.Store) int {
	t.Helper()
	jobs, err := store.Jobs(context.Background(), bridge.JobFilter{States: []bridge.State{bridge.StateDone}})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// checkpoint copies the WAL of the database at path into it and truncates the WAL to nothing.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, logged, copied int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &copied); err != nil || busy != 0 {
		t.Fatalf("wal_checkpoint(TRUNCATE) = busy %d, %v", busy, err)
	}
}

// integrity runs PRAGMA integrity_check on the database file at path over a connection of its
// own, and returns its answer ("ok" for an intact file).
func integrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	return res
}
