package postgres_test

import (
	"context"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/storetest"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// BenchmarkClaimRecord runs the stores' claim-and-record benchmark on a new PostgreSQL database
// (from BRIDGE_TEST_POSTGRES_DSN; skipped without it). Same names as SQLite's, so benchstat
// compares the two stores: go test ./bridge/postgres -run '^$' -bench ClaimRecord -count 10 > pg.txt
func BenchmarkClaimRecord(b *testing.B) { storetest.BenchmarkClaimRecord(b, openBench) }

// BenchmarkGroupCommit runs the stores' group-commit benchmark on a new PostgreSQL database
// (skipped without BRIDGE_TEST_POSTGRES_DSN): go test ./bridge/postgres -run '^$' -bench GroupCommit
func BenchmarkGroupCommit(b *testing.B) { storetest.BenchmarkGroupCommit(b, openBench) }

// BenchmarkClaimPaused runs the stores' paused-endpoint claim benchmark on a new PostgreSQL database:
// go test ./bridge/postgres -run '^$' -bench ClaimPaused -count 10 > new.txt
func BenchmarkClaimPaused(b *testing.B) { storetest.BenchmarkClaimPaused(b, openBench) }

// BenchmarkPurge runs the stores' retention purge benchmark on a new PostgreSQL database:
// go test ./bridge/postgres -run '^$' -bench Purge -count 10 > new.txt
func BenchmarkPurge(b *testing.B) { storetest.BenchmarkPurge(b, openBench) }

// openBench opens a store on a new PostgreSQL database for one benchmark run.
func openBench(b *testing.B) bridge.Store {
	s, err := postgres.Open(context.Background(), pgtest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	return s
}
