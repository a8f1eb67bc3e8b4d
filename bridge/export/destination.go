package export

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Destination receives a run's files, each whole or not at all.
type Destination interface {
	// Temp returns a scratch file to download into (near the destination, for a cheap commit).
	Temp() (*os.File, error)
	// Commit makes the closed scratch file f the run's file name, atomically; f is consumed.
	Commit(ctx context.Context, f string, name string) error
	// Read returns a small file's content (the run journal); an error wrapping os.ErrNotExist
	// when there is none.
	Read(ctx context.Context, name string) ([]byte, error)
	// Exists reports whether name is there.
	Exists(ctx context.Context, name string) (bool, error)
	// Remove deletes the named files where present, and any scratch files left behind.
	Remove(ctx context.Context, names []string) error
	// Prune keeps the newest n runs of export; a no-op where runs are not folders.
	Prune(ctx context.Context, export string, n int) error
	// String names the destination for logs and the manifest.
	String() string
}

// Open returns the destination at location: s3://bucket/prefix, else a folder.
func Open(ctx context.Context, c *Config, location string) (Destination, error) {
	if rest, ok := strings.CutPrefix(location, "s3://"); ok {
		return openS3(ctx, c.S3, rest)
	}
	if err := os.MkdirAll(location, 0o755); err != nil {
		return nil, fmt.Errorf("destination %s: %w", location, err)
	}
	return folder(location), nil
}

// folder is a local folder destination.
type folder string

var _ Destination = folder("")

// String implements Destination.
func (d folder) String() string { return string(d) }

// Temp implements Destination.
func (d folder) Temp() (*os.File, error) { return os.CreateTemp(string(d), ".partial-*") }

// Commit syncs f and renames it into place.
func (d folder) Commit(_ context.Context, f, name string) error {
	h, err := os.Open(f)
	if err != nil {
		return err
	}
	err = h.Sync()
	h.Close()
	if err != nil {
		return err
	}
	if err := os.Rename(f, filepath.Join(string(d), name)); err != nil {
		return fmt.Errorf("destination %s: %w", d, err)
	}
	if dir, err := os.Open(string(d)); err == nil { // the rename itself, durable
		dir.Sync()
		dir.Close()
	}
	return nil
}

// Read implements Destination.
func (d folder) Read(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), name))
}

// Exists implements Destination.
func (d folder) Exists(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(string(d), name))
	if os.IsNotExist(err) {
		return false, nil
	}
	return err == nil, err
}

// Remove implements Destination.
func (d folder) Remove(_ context.Context, names []string) error {
	scratch, _ := filepath.Glob(filepath.Join(string(d), ".partial-*"))
	for _, n := range names {
		scratch = append(scratch, filepath.Join(string(d), n))
	}
	for _, f := range scratch {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// Prune removes the oldest run folders beside this one beyond n; only folders holding a
// manifest of this export are ever touched.
func (d folder) Prune(_ context.Context, export string, n int) error {
	if n <= 0 {
		return nil
	}
	parent := filepath.Dir(string(d))
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var runs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(parent, e.Name(), ManifestName))
		var m struct {
			Export string `json:"export"`
		}
		if err == nil && json.Unmarshal(b, &m) == nil && m.Export == export {
			runs = append(runs, e.Name())
		}
	}
	sort.Strings(runs)
	for len(runs) > n {
		if err := os.RemoveAll(filepath.Join(parent, runs[0])); err != nil && !os.IsNotExist(err) {
			return err
		}
		runs = runs[1:]
	}
	return nil
}
