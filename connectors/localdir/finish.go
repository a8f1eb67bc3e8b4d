package localdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/transcript-bridge/bridge/connectors"
)

// Finish moves a finished file to done/ or failed/ (keeping its path under the folder) when
// MoveFinished is set. Every step stays inside the folder (os.Root) and follows no link: a
// link where done/, failed/ or any folder on the way should be is an error naming it, and
// nothing is moved. A file already at the target is never overwritten (the move fails naming
// it), and a path that no longer names the file found (changed, replaced, a link) is left alone.
func (s *Source) Finish(_ context.Context, r connectors.Recording, outcome connectors.Outcome) error {
	if !s.cfg.MoveFinished {
		return nil
	}
	dir := DoneDir
	if outcome != connectors.OutcomeDone {
		dir = FailedDir
	}
	root, err := os.OpenRoot(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("finish %s: %w", r.ItemID, err)
	}
	defer root.Close()
	from := filepath.FromSlash(r.ItemID)
	info, err := root.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // moved or removed already
	}
	if err != nil {
		return fmt.Errorf("finish %s: %w", r.ItemID, err)
	}
	if !info.Mode().IsRegular() || version(info) != r.Version ||
		(r.Fields[FieldFileID] != "" && fileID(info) != r.Fields[FieldFileID]) {
		return nil // a newer version, another file or a link is there: leave it for its own job
	}
	to := path.Join(dir, r.ItemID)
	if err := s.mkdirs(root, path.Dir(to)); err != nil {
		return fmt.Errorf("finish %s: %w", r.ItemID, err)
	}
	if err := move(root, from, filepath.FromSlash(to), info); err != nil {
		return fmt.Errorf("finish %s: %w", r.ItemID, err)
	}
	return nil
}

// mkdirs makes each folder of dir (slash-separated, under the root) that is missing, and
// refuses any that exists as something else than a folder: a link to elsewhere, a file.
func (s *Source) mkdirs(root *os.Root, dir string) error {
	at := ""
	for _, part := range strings.Split(dir, "/") {
		at = path.Join(at, part)
		name := filepath.FromSlash(at)
		fi, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			fi, err = root.Lstat(name) // made here, or by another process meanwhile
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is a %s, not a folder: nothing moved (remove it; the bridge makes the folders of move_finished itself)",
				filepath.Join(s.cfg.Path, name), kind(fi))
		}
	}
	return nil
}

// move moves from to to under root without ever replacing what is at to: a hard link then the
// removal of from, so a file already there fails the link (fs.ErrExist). Where the folder
// cannot link (some network and FAT file systems), a rename once to is seen to be free. What
// arrives at to must be want, the file checked before: a new file written at from meanwhile
// (a recording dropped again) is left where it is, unmoved, for its own job.
func move(root *os.Root, from, to string, want fs.FileInfo) error {
	err := root.Link(from, to)
	switch {
	case err == nil:
		if got, err := root.Lstat(to); err != nil || !os.SameFile(got, want) {
			root.Remove(to) // the link is another file's: from keeps it
			return nil
		}
		return root.Remove(from)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s exists already: not overwritten, the file stays where it is", to)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EXDEV), errors.Is(err, syscall.EMLINK):
		if _, err := root.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s exists already: not overwritten, the file stays where it is", to)
		}
		if err := root.Rename(from, to); err != nil {
			return err
		}
		if got, err := root.Lstat(to); err == nil && !os.SameFile(got, want) {
			return root.Rename(to, from) // another file came meanwhile: put it back
		}
		return nil
	}
	return err
}

// kind names what a path is, for errors.
func kind(fi fs.FileInfo) string {
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t == 0:
		return "file"
	default:
		return t.String()
	}
}
