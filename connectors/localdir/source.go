// Package localdir is the local-folder source: files under a folder (recursive, glob filters),
// each taken once its size and modification time have stayed the same for a while, optionally
// moved to done/ or failed/ subfolders when their job is final.
package localdir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// Source is a folder source.
type Source struct {
	cfg Config
	mu  sync.Mutex
	// seen remembers each file's size and mtime and since when they have not changed.
	seen map[string]observation
}

type observation struct {
	size    int64
	modTime time.Time
	since   time.Time
}

var (
	_ connectors.Source   = (*Source)(nil)
	_ connectors.Finisher = (*Source)(nil)
	_ connectors.Pending  = (*Source)(nil)
)

// Subfolders that hold finished files.
const (
	DoneDir   = "done"
	FailedDir = "failed"
)

// New checks the configuration (Validate) and returns the source. A missing folder is an
// error.
func New(cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("path %s: %w", cfg.Path, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("path %s: not a folder", cfg.Path)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Source{cfg: cfg, seen: map[string]observation{}}, nil
}

// List walks the folder and returns the files that are stable. The cursor is the time of the
// scan; every stable file is listed each time and the store keeps each version once, so files
// copied in with old modification times are never missed. The walk stays inside the folder
// (os.Root): symbolic links are neither followed nor listed, whatever they point to.
func (s *Source) List(ctx context.Context, _ string) ([]connectors.Recording, string, error) {
	now := s.cfg.Now()
	root, err := os.OpenRoot(s.cfg.Path)
	if err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", s.cfg.Path, err)
	}
	defer root.Close()
	var out []connectors.Recording
	current := map[string]bool{}
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scan %s: %w", filepath.Join(s.cfg.Path, filepath.FromSlash(rel)), err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if rel != "." && (!s.cfg.Recursive || (s.cfg.MoveFinished && (rel == DoneDir || rel == FailedDir)) || strings.HasPrefix(d.Name(), ".")) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") || !s.wanted(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		current[rel] = true
		if r, ok := s.observe(rel, info, now); ok {
			out = append(out, r)
		}
		return nil
	})
	s.mu.Lock()
	for p := range s.seen {
		if !current[p] {
			delete(s.seen, p)
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, "", err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ItemID < out[j].ItemID })
	return out, now.UTC().Format(time.RFC3339Nano), nil
}

// observe records what a scan saw of rel and returns its recording once it is stable.
func (s *Source) observe(rel string, info fs.FileInfo, now time.Time) (connectors.Recording, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.seen[rel]
	if !ok || o.size != info.Size() || !o.modTime.Equal(info.ModTime()) {
		o = observation{size: info.Size(), modTime: info.ModTime(), since: now}
		s.seen[rel] = o
	}
	// Stable: unchanged across scans for StableFor, or last written longer ago than that.
	if now.Sub(o.since) < s.cfg.StableFor && now.Sub(info.ModTime()) < s.cfg.StableFor {
		return connectors.Recording{}, false
	}
	r := connectors.Recording{
		ItemID:  rel,
		Version: version(info),
		Name:    path.Base(rel),
		Size:    info.Size(),
		ModTime: info.ModTime().UTC(),
		Link:    "file://" + filepath.ToSlash(filepath.Join(s.abs(), rel)),
	}
	if id := fileID(info); id != "" {
		r.Fields = map[string]string{FieldFileID: id}
	}
	if first, _, ok := strings.Cut(rel, "/"); ok && s.cfg.OwnerFrom == "folder" {
		r.Owner = &connectors.Owner{Provider: "localdir", ID: first}
		if strings.Contains(first, "@") {
			r.Owner.Email = first
		}
	}
	return r, true
}

func (s *Source) abs() string {
	a, err := filepath.Abs(s.cfg.Path)
	if err != nil {
		return s.cfg.Path
	}
	return a
}

// version names a file's content state: its size and modification time.
func version(info fs.FileInfo) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%d", info.Size(), info.ModTime().UnixNano()))
	return hex.EncodeToString(sum[:8])
}

func (s *Source) wanted(rel string) bool {
	return connectors.Wanted(s.cfg.Include, s.cfg.Exclude, rel)
}

// Pending returns how many files were seen but are not stable yet (connectors.Pending).
func (s *Source) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	n := 0
	for _, o := range s.seen {
		if now.Sub(o.since) < s.cfg.StableFor && now.Sub(o.modTime) < s.cfg.StableFor {
			n++
		}
	}
	return n
}

// CheapOpen implements connectors.Peeker: a local file's first bytes cost no request.
func (s *Source) CheapOpen() bool { return true }

// Open opens the file of r after checking it is still the file found, at that version. It
// stays inside the folder (os.Root) and follows no link: the path must still name a regular
// file, and the file opened must be the one found (device and inode, FieldFileID), so a file
// swapped for a link, or for another file with the same size and time, is never read.
func (s *Source) Open(_ context.Context, r connectors.Recording) (io.ReadCloser, error) {
	root, err := os.OpenRoot(s.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", r.ItemID, err)
	}
	defer root.Close()
	name := filepath.FromSlash(r.ItemID)
	before, err := root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", r.ItemID, err)
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: not a regular file any more (%s): not read", r.ItemID, before.Mode().Type())
	}
	// Non-blocking: a FIFO swapped in after the Lstat would otherwise block the open for good.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", r.ItemID, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case !info.Mode().IsRegular():
		err = fmt.Errorf("not a regular file any more (%s): not read", info.Mode().Type())
	case !os.SameFile(before, info):
		err = errors.New("the path was swapped for another file while it was opened")
	case r.Fields[FieldFileID] != "" && fileID(info) != r.Fields[FieldFileID]:
		err = errors.New("the path now names another file than the one found")
	case version(info) != r.Version:
		err = errors.New("the file changed since it was found (a new version will be taken)")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", r.ItemID, err)
	}
	return f, nil
}

// Check implements connectors.Checker: the folder can be read (and written, when finished
// files are moved, with done/ and failed/ real folders, not links).
func (s *Source) Check(context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.abs())
	if err != nil {
		return nil, fmt.Errorf("path %s: %w", s.cfg.Path, err)
	}
	lines := []string{fmt.Sprintf("folder %s readable (%d entries at the top)", s.cfg.Path, len(entries))}
	if s.cfg.MoveFinished {
		for _, d := range []string{DoneDir, FailedDir} {
			if fi, err := os.Lstat(filepath.Join(s.cfg.Path, d)); err == nil && !fi.IsDir() {
				return lines, connectors.NeedsSetup(fmt.Errorf("move_finished: %s is not a folder (%s)", filepath.Join(s.cfg.Path, d), fi.Mode().Type()),
					"remove it; the bridge creates "+d+"/ as a folder of its own")
			}
		}
		f, err := os.CreateTemp(s.abs(), ".bridge-check-*")
		if err != nil {
			return lines, fmt.Errorf("move_finished needs to write in %s: %w", s.cfg.Path, err)
		}
		f.Close()
		os.Remove(f.Name())
		lines = append(lines, "writable (move_finished)")
	}
	return lines, nil
}
