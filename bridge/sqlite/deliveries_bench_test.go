package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/storetest"
)

// BenchmarkClaimRecord runs the stores' claim-and-record benchmark on a new SQLite file:
// go test ./bridge/sqlite -run '^$' -bench ClaimRecord -count 10 > new.txt
func BenchmarkClaimRecord(b *testing.B) { storetest.BenchmarkClaimRecord(b, openBench) }

// BenchmarkGroupCommit runs the stores' group-commit benchmark on a new SQLite file:
// go test ./bridge/sqlite -run '^$' -bench GroupCommit -count 10 > new.txt
func BenchmarkGroupCommit(b *testing.B) { storetest.BenchmarkGroupCommit(b, openBench) }

// BenchmarkClaimPaused runs the stores' paused-endpoint claim benchmark on a new SQLite file:
// go test ./bridge/sqlite -run '^$' -bench ClaimPaused -count 10 > new.txt
func BenchmarkClaimPaused(b *testing.B) { storetest.BenchmarkClaimPaused(b, openBench) }

// openBench opens a store on a new SQLite file for one benchmark run.
func openBench(b *testing.B) bridge.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bridge.db"))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPurge runs the stores' retention purge benchmark on a new SQLite file:
// go test ./bridge/sqlite -run '^$' -bench Purge -count 10 > new.txt
func BenchmarkPurge(b *testing.B) { storetest.BenchmarkPurge(b, openBench) }
