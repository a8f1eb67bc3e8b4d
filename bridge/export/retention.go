package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Keep is how long local export archives are kept: for Age, or the newest Count runs of each
// export (neither: for good). It applies to folder destinations only; an S3 prefix keeps its own
// lifecycle rules.
type Keep struct {
	Age   time.Duration
	Count int
}

// Zero reports whether k keeps every archive.
func (k Keep) Zero() bool { return k.Age <= 0 && k.Count <= 0 }

// Expired returns the finished runs with a local folder whose archives are past k at now, and
// still there: each folder holds the manifest of its own run (a folder several runs share, or one
// another run wrote since, is never touched).
func Expired(ctx context.Context, s bridge.ExportStore, k Keep, now time.Time) ([]bridge.ExportRun, error) {
	if k.Zero() {
		return nil, nil
	}
	runs, err := s.Runs(ctx, "", 1<<20)
	if err != nil {
		return nil, fmt.Errorf("export runs: %w", err)
	}
	seen := map[string]int{} // runs newer than this one, by export
	var out []bridge.ExportRun
	for _, r := range runs { // newest first
		if r.Status != bridge.ExportCompleted || r.Location == "" || strings.HasPrefix(r.Location, "s3://") {
			continue
		}
		newer := seen[r.Export]
		seen[r.Export]++
		old := k.Age > 0 && r.FinishedAt.Before(now.Add(-k.Age))
		many := k.Count > 0 && newer >= k.Count
		if (old || many) && ownsFolder(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ownsFolder reports whether r's location holds r's own manifest.
func ownsFolder(r bridge.ExportRun) bool {
	b, err := os.ReadFile(filepath.Join(r.Location, ManifestName))
	var m Manifest
	return err == nil && json.Unmarshal(b, &m) == nil && m.Export == r.Export && m.Tick.Equal(r.Tick)
}

// PurgeArchives removes the folders of the runs Expired returns, up to limit, and returns how
// many it removed. A folder is removed through an os.Root on its parent: nothing outside it.
func PurgeArchives(ctx context.Context, s bridge.ExportStore, k Keep, now time.Time, limit int) (int, error) {
	runs, err := Expired(ctx, s, k, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if n == limit || ctx.Err() != nil {
			break
		}
		root, err := os.OpenRoot(filepath.Dir(filepath.Clean(r.Location)))
		if err != nil {
			return n, fmt.Errorf("export %s run %s: %w", r.Export, r.Tick.Format(time.RFC3339), err)
		}
		err = root.RemoveAll(filepath.Base(filepath.Clean(r.Location)))
		root.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("export %s run %s: remove %s: %w", r.Export, r.Tick.Format(time.RFC3339), r.Location, err)
		}
		n++
	}
	return n, nil
}
