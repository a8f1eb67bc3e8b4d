package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// journalName is the file listing what an unfinished run has written so far. A run that
// starts and finds one (a killed attempt: the checkpoint did not move, so this run covers the
// same transcripts) removes those files once its own are in place; files of finished runs are
// never touched. The journal goes once the manifest is written.
const journalName = ".bridge-run.json"

type journal struct {
	Export string    `json:"export"`
	Tick   time.Time `json:"tick"`
	Files  []string  `json:"files"`

	dest Destination
}

// openJournal reads what an unfinished run of export left at dest, and starts this run's.
func openJournal(ctx context.Context, dest Destination, export string, tick time.Time) (*journal, []string, error) {
	var leftover []string
	b, err := dest.Read(ctx, journalName)
	switch {
	case err == nil:
		var old journal
		if json.Unmarshal(b, &old) == nil && old.Export == export {
			leftover = old.Files
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("run journal: %w", err)
	}
	j := &journal{Export: export, Tick: tick, Files: leftover, dest: dest} // keep listing them until removed
	return j, leftover, j.save(ctx)
}

// add records name as written by this run.
func (j *journal) add(ctx context.Context, name string) error {
	j.Files = append(j.Files, name)
	return j.save(ctx)
}

func (j *journal) save(ctx context.Context) error {
	f, err := j.dest.Temp()
	if err != nil {
		return err
	}
	err = errors.Join(json.NewEncoder(f).Encode(j), f.Close())
	if err == nil {
		err = j.dest.Commit(ctx, f.Name(), journalName)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("run journal: %w", err)
	}
	return nil
}

// finish removes the leftovers not rewritten by this run, then the journal itself.
func (j *journal) finish(ctx context.Context, leftover []string, keep map[string]bool) error {
	var gone []string
	for _, n := range leftover {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	return j.dest.Remove(ctx, append(gone, journalName))
}

// stamp is a tick in file names.
func stamp(t time.Time) string { return strings.ReplaceAll(t.UTC().Format("20060102T150405"), ":", "") }
