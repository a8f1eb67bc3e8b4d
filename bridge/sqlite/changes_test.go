package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/storetest"
)

// TestSharedStore runs the suite's two-handle tests on two Opens of one SQLite file, as bridge
// run and a command in another process have.
func TestSharedStore(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (bridge.Store, bridge.Store) {
		path := filepath.Join(t.TempDir(), "bridge.db")
		a, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sqlite.Open(context.Background(), path) // migrated already: runs none
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		return a, b
	})
}
