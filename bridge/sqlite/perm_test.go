package sqlite_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestStoreFilesArePrivate (issue 30, point 6): a new store's folder is made 0700 and its
// database, -wal and -shm files are 0600: names, e-mail addresses and transcripts live there.
func TestStoreFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "bridge.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.InstanceID(context.Background()); err != nil {
		t.Fatal(err)
	}
	check := func(p string, want fs.FileMode) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("stat %s: %v", p, err)
			return
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", filepath.Base(p), got, want)
		}
	}
	check(dir, 0o700)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		check(f, 0o600)
	}
}
