package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// API is what an export needs of the transcription service.
type API interface {
	All(ctx context.Context, p api.ListParams) iter.Seq2[api.ListItem, error]
	Get(ctx context.Context, id string) (*api.Transcription, error)
	Export(ctx context.Context, id, format string) (*api.Download, error)
	ExportBulk(ctx context.Context, ids []string, format string) (*api.Download, error)
}

// Exporter performs runs.
type Exporter struct {
	Store Store
	API   API
	// Log receives a line per archive (default: discarded).
	Log *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Progress, when set, hears transcripts done out of total.
	Progress func(done, total int)
	// Lease is how long a run's claims (its export's lease, one run of an export at a time,
	// and its tick's) last between renewals, every third of it: a killed run is taken over
	// after at most this long (default bridge.DefaultLease).
	Lease time.Duration
	// Replica names this process in the export leases it holds (default
	// bridge.DefaultReplica()); each run adds a suffix of its own.
	Replica string
	// Metrics hears each finished run's outcome (nil: nothing).
	Metrics Metrics
	// Gone, when set, hears of each transcription a download found deleted upstream (404), so
	// its job ends deleted (bridge.Pipeline.GoneUpstream).
	Gone func(ctx context.Context, transcriptionID string)
}

// gone reports transcription id deleted upstream to Gone, if set.
func (e *Exporter) gone(ctx context.Context, id string) {
	if e.Gone != nil {
		e.Gone(ctx, id)
	}
}

func (e *Exporter) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Exporter) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Write exports items to dest: archives or files, then the manifest, then removes what an
// earlier attempt of the same run left. It returns the manifest, or the first error (the files
// written so far stay, listed by the run's journal). The journal stays at dest: the caller
// drops it once the run is recorded, and the next run removes what it lists if it never is.
func (e *Exporter) Write(ctx context.Context, c *Config, tick time.Time, w Window, items []api.ListItem, dest Destination, renew func()) (*Manifest, error) {
	m := &Manifest{Export: c.Name, Tick: tick, Window: w, Format: c.Format, Layout: c.Layout, Destination: dest.String(),
		Counts: Counts{Listed: len(items)}, Transcripts: []Transcript{}, Skipped: []Skipped{}}
	jr, leftover, err := openJournal(ctx, dest, c.Name, tick)
	if err != nil {
		return nil, err
	}
	rw := &runWriter{e: e, c: c, dest: dest, tick: tick, m: m, jr: jr, renew: renew, mine: map[string]bool{}, keep: map[string]bool{}}
	for _, n := range leftover {
		rw.mine[n] = true // a killed attempt's: may be replaced
	}
	manifest := ManifestName
	if other, err := dest.Exists(ctx, ManifestName); err != nil {
		return nil, err
	} else if other && !rw.mine[ManifestName] { // runs share this destination: never replace another's
		manifest = fmt.Sprintf("manifest-%s.json", stamp(tick))
	}
	if c.Layout == LayoutZip {
		err = rw.writeArchives(ctx, items)
	} else {
		err = rw.writeFiles(ctx, items)
	}
	if err != nil {
		return nil, err
	}
	if err := rw.writeManifest(ctx, manifest); err != nil {
		return nil, err
	}
	if err := jr.settle(ctx, leftover, rw.keep); err != nil {
		return nil, fmt.Errorf("clean %s: %w", dest, err)
	}
	return m, nil
}

// runWriter is one Write in progress: the manifest it fills, the journal of the files it
// commits, the names it keeps and those it may replace.
type runWriter struct {
	e     *Exporter
	c     *Config
	dest  Destination
	tick  time.Time
	m     *Manifest
	jr    *journal
	renew func()
	mine  map[string]bool // left by a killed attempt of this run: may be replaced
	keep  map[string]bool // committed by this attempt
}

// commit journals name, then moves the scratch file tmp there and keeps name. Journal first:
// a run killed between the two leaves its journal naming a file that may not be there
// (removing it is a no-op), never a file of its own that its journal does not name, which the
// next attempt at the tick would take for another run's and keep beside its own (a second
// manifest of the tick, a transcript's file no manifest lists).
func (rw *runWriter) commit(ctx context.Context, tmp, name string) error {
	if !slices.Contains(rw.jr.Files, name) {
		if err := rw.jr.add(ctx, name); err != nil {
			return err
		}
	}
	if err := rw.dest.Commit(ctx, tmp, name); err != nil {
		return err
	}
	rw.keep[name] = true
	return nil
}

// committer is commit bound to ctx, as archive and single take it.
func (rw *runWriter) committer(ctx context.Context) func(tmp, name string) error {
	return func(tmp, name string) error { return rw.commit(ctx, tmp, name) }
}

// writeManifest fills in the manifest's counts and time and commits it as name.
func (rw *runWriter) writeManifest(ctx context.Context, name string) error {
	m := rw.m
	m.Counts.Exported, m.Counts.Skipped = len(m.Transcripts), len(m.Skipped)
	m.WrittenAt = rw.e.now()
	f, err := rw.dest.Temp()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	err = errors.Join(enc.Encode(m), f.Close())
	if err == nil {
		err = rw.commit(ctx, f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("manifest: %w", bridge.NoSpace(rw.dest.String(), err))
	}
	return nil
}

func (e *Exporter) progress(done, total int) {
	if e.Progress != nil {
		e.Progress(done, total)
	}
}

// download streams body into a scratch file of dest, returning its path, size and SHA-256.
func download(dest Destination, body io.Reader) (string, int64, string, error) {
	f, err := dest.Temp()
	if err != nil {
		return "", 0, "", bridge.NoSpace(dest.String(), err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, "", bridge.NoSpace(dest.String(), err) // a full destination, named
	}
	return f.Name(), n, hex.EncodeToString(h.Sum(nil)), nil
}

func title(it api.ListItem) string {
	if it.Title != nil {
		return *it.Title
	}
	return ""
}
