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

// The journal of a run lists what it has written so far, at its destination, until the run is
// recorded in the store. A run that finds its tick's journal (a killed attempt of the same
// tick) replaces or removes those files; a run that finds an earlier run abandoned removes what
// that run's journal lists (supersede); a run that fails removes its own (discard). Files of
// recorded runs are never touched: a journal goes only once its run is recorded (dropJournal).

// journalFile names the journal of export's run at tick: one per run, so runs of several
// exports or ticks sharing a folder keep theirs apart.
func journalFile(export string, tick time.Time) string {
	return fmt.Sprintf(".bridge-run-%s-%s.json", export, stamp(tick))
}

type journal struct {
	Export string    `json:"export"`
	Tick   time.Time `json:"tick"`
	Files  []string  `json:"files"`

	dest Destination
}

// readJournal returns the files the journal of export's run at tick lists at dest (none when
// there is no journal).
func readJournal(ctx context.Context, dest Destination, export string, tick time.Time) ([]string, error) {
	b, err := dest.Read(ctx, journalFile(export, tick))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("run journal: %w", err)
	}
	var old journal
	if json.Unmarshal(b, &old) != nil || old.Export != export {
		return nil, nil
	}
	return old.Files, nil
}

// openJournal reads what an unfinished attempt of export's run at tick left at dest, and starts
// this attempt's.
func openJournal(ctx context.Context, dest Destination, export string, tick time.Time) (*journal, []string, error) {
	leftover, err := readJournal(ctx, dest, export, tick)
	if err != nil {
		return nil, nil, err
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
		err = j.dest.Commit(ctx, f.Name(), journalFile(j.Export, j.Tick))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("run journal: %w", err)
	}
	return nil
}

// settle removes the leftovers not rewritten by this run; the journal stays (dropJournal).
func (j *journal) settle(ctx context.Context, leftover []string, keep map[string]bool) error {
	var gone []string
	for _, n := range leftover {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return j.dest.Remove(ctx, gone)
}

// dropJournal removes the journal of export's run at tick, once the run is recorded.
func dropJournal(ctx context.Context, dest Destination, export string, tick time.Time) error {
	return dest.Remove(ctx, []string{journalFile(export, tick)})
}

// discard removes what the journal of export's run at tick lists, then the journal: the files
// of a run that will never be recorded as completed.
func discard(ctx context.Context, dest Destination, export string, tick time.Time) error {
	files, err := readJournal(ctx, dest, export, tick)
	if err != nil {
		return err
	}
	return dest.Remove(ctx, append(files, journalFile(export, tick)))
}

// stamp is a tick in file names.
func stamp(t time.Time) string { return strings.ReplaceAll(t.UTC().Format("20060102T150405"), ":", "") }
