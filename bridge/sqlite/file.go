package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// uriPath escapes what a file: URI's path may not hold as itself.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// create makes the database's folder (0700) and file (0600) when they do not exist yet, so
// what the store keeps (names, e-mail addresses, transcripts) is readable by the bridge's user
// only: SQLite would create the file 0644, and its -wal and -shm files take the file's mode.
// Existing folders and files keep the mode they have.
func create(path string) error {
	if strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return nil
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
