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

// TestStorePathWithURICharacters: a path holding '#', '?' or '%' opens the file it names, not
// another one cut at the '#'.
func TestStorePathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	var ids []string
	for _, name := range []string{"a#1", "a#2", "b?x=1", "c%20d"} {
		path := filepath.Join(base, name, "bridge.db")
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("Open(%q) = %v", path, err)
		}
		id, err := s.InstanceID(ctx)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("Open(%q) did not write the file it names: %v", path, err)
		}
		ids = append(ids, id)
	}
	if ids[0] == ids[1] {
		t.Errorf("stores at a#1 and a#2 share one database (instance %s)", ids[0])
	}
}
