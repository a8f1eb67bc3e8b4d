package export

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
)

// RemoveCopies removes the copies of transcription id that the exports wrote to local folders,
// as the runs' manifests list them (bridge.Forget's copies): a file of layout files is removed,
// an entry of a ZIP archive is taken out of it (the archive rewritten, then renamed into place),
// and the manifest loses the transcript and has its archive's size, checksum and count set
// again. S3 destinations are left to the bucket. Every file is reached through an os.Root on
// the run's folder. It returns what it did (with dryRun: would do).
func RemoveCopies(ctx context.Context, s bridge.ExportStore, id string, dryRun bool) ([]string, error) {
	runs, err := s.Runs(ctx, "", 1<<20)
	if err != nil {
		return nil, fmt.Errorf("export runs: %w", err)
	}
	var acts []string
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Location == "" || strings.HasPrefix(r.Location, "s3://") || seen[r.Location] {
			continue
		}
		seen[r.Location] = true
		root, err := os.OpenRoot(r.Location)
		if errors.Is(err, fs.ErrNotExist) {
			continue // purged, or moved away
		}
		if err != nil {
			return acts, fmt.Errorf("export folder %s: %w", r.Location, err)
		}
		names, err := fs.Glob(root.FS(), "manifest*.json")
		for _, name := range names {
			if err != nil {
				break
			}
			var more []string
			more, err = removeFromRun(root, name, id, dryRun)
			acts = append(acts, more...)
		}
		root.Close()
		if err != nil {
			return acts, fmt.Errorf("export folder %s: %w", r.Location, err)
		}
	}
	return acts, nil
}

// removeFromRun removes id's copies listed by the manifest name in root, and the manifest's
// entry of it.
func removeFromRun(root *os.Root, name, id string, dryRun bool) ([]string, error) {
	b, err := root.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if json.Unmarshal(b, &m) != nil {
		return nil, nil // not a manifest of ours
	}
	var acts []string
	keep := m.Transcripts[:0]
	for _, t := range m.Transcripts {
		if t.ID != id {
			keep = append(keep, t)
			continue
		}
		where := path.Join(root.Name(), t.File)
		if t.Archive != "" {
			where = t.File + " in " + path.Join(root.Name(), t.Archive)
		}
		verb := "removed"
		if dryRun {
			verb = "remove"
		}
		acts = append(acts, verb+" the export copy "+where)
		if dryRun {
			continue
		}
		if t.Archive == "" {
			if err := root.Remove(t.File); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return acts, err
			}
			continue
		}
		if err := dropFromArchive(root, &m, t); err != nil {
			return acts, err
		}
	}
	if len(acts) == 0 || dryRun {
		return acts, nil
	}
	m.Transcripts = keep
	m.Counts.Exported = len(keep)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return acts, err
	}
	if err := root.WriteFile(".partial-"+name, append(out, '\n'), 0o644); err != nil {
		return acts, err
	}
	return acts, root.Rename(".partial-"+name, name)
}

// dropFromArchive rewrites t's archive without t's entry and sets the archive's size, checksum
// and count in m.
func dropFromArchive(root *os.Root, m *Manifest, t Transcript) error {
	f, err := root.Open(t.Archive)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return fmt.Errorf("archive %s: %w", t.Archive, err)
	}
	tmp := ".partial-" + t.Archive
	out, err := root.Create(tmp)
	if err != nil {
		return err
	}
	h := sha256.New()
	counted := &countWriter{w: io.MultiWriter(out, h)}
	zw := zip.NewWriter(counted)
	n := 0
	for _, e := range zr.File {
		if e.Name == t.File {
			continue
		}
		if err = zw.Copy(e); err != nil {
			break
		}
		n++
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = out.Sync()
	}
	err = errors.Join(err, out.Close())
	if err == nil {
		err = root.Rename(tmp, t.Archive)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("archive %s: %w", t.Archive, err)
	}
	for i := range m.Archives {
		if m.Archives[i].File == t.Archive {
			m.Archives[i].Size, m.Archives[i].SHA256, m.Archives[i].Count = counted.n, hex.EncodeToString(h.Sum(nil)), n
		}
	}
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
