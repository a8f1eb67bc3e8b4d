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
	"iter"
	"log/slog"
	"os"
	"path"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/failpoint"
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
	// Lease is how long a claimed run is reserved between renewals (default 10 min).
	Lease time.Duration
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

// List returns the completed transcriptions of c created in w, oldest first, pages of 100.
func (e *Exporter) List(ctx context.Context, c *Config, w Window) ([]api.ListItem, error) {
	p := api.ListParams{Status: "completed", DateFrom: w.From.UTC(), DateTo: w.Until.UTC(), ProjectID: c.Filter.ProjectID,
		Language: c.Filter.Language, Sort: "created_at", Limit: 100}
	for k, v := range c.Filter.Metadata { // the service filters on one key; the rest here
		p.MetadataKey, p.MetadataValue = k, v
		break
	}
	var out []api.ListItem
	for it, err := range e.API.All(ctx, p) {
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		if it.CreatedAt.Before(w.From) || !it.CreatedAt.Before(w.Until) || !metaMatches(it.Metadata, c.Filter.Metadata) {
			continue
		}
		if c.Filter.Source != "" {
			src, err := e.Store.SourceOf(ctx, it.ID)
			if err != nil {
				return nil, err
			}
			if src != c.Filter.Source {
				continue
			}
		}
		out = append(out, it)
	}
	ids := make([]string, len(out))
	for i, it := range out {
		ids[i] = it.ID
	}
	done, err := e.Store.Exported(ctx, c.Name, ids)
	if err != nil {
		return nil, err
	}
	fresh := out[:0]
	for _, it := range out {
		if !done[it.ID] { // written by an earlier run whose window overlapped this one
			fresh = append(fresh, it)
		}
	}
	return fresh, nil
}

// Settled returns how far the checkpoint may move after a run of w: until, or the creation time
// of the oldest transcription of the window still queued or processing, so one that completes
// later is taken by a later run (the ids written are remembered: none is written twice).
func (e *Exporter) Settled(ctx context.Context, c *Config, w Window) (time.Time, error) {
	settled := w.Until
	for _, status := range []string{"queued", "processing"} {
		p := api.ListParams{Status: status, DateFrom: w.From.UTC(), DateTo: w.Until.UTC(), ProjectID: c.Filter.ProjectID,
			Language: c.Filter.Language, Sort: "created_at", Limit: 1}
		for it, err := range e.API.All(ctx, p) {
			if err != nil {
				return time.Time{}, fmt.Errorf("list %s: %w", status, err)
			}
			if !it.CreatedAt.Before(w.From) && it.CreatedAt.Before(settled) {
				settled = it.CreatedAt
			}
			break // sorted by creation: the first is the oldest
		}
	}
	return settled, nil
}

func metaMatches(raw json.RawMessage, want map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	for k, v := range want {
		if fmt.Sprint(m[k]) != v {
			return false
		}
	}
	return true
}

// Write exports items to dest: archives or files, then the manifest, then removes what an
// earlier attempt of the same run left. It returns the manifest.
func (e *Exporter) Write(ctx context.Context, c *Config, tick time.Time, w Window, items []api.ListItem, dest Destination, renew func()) (*Manifest, error) {
	m := &Manifest{Export: c.Name, Tick: tick, Window: w, Format: c.Format, Layout: c.Layout, Destination: dest.String(),
		Counts: Counts{Listed: len(items)}, Transcripts: []Transcript{}, Skipped: []Skipped{}}
	jr, leftover, err := openJournal(ctx, dest, c.Name, tick)
	if err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for _, n := range leftover {
		mine[n] = true // a killed attempt's: may be replaced
	}
	manifest := ManifestName
	if other, err := dest.Exists(ctx, ManifestName); err != nil {
		return nil, err
	} else if other && !mine[ManifestName] { // runs share this destination: never replace another's
		manifest = fmt.Sprintf("manifest-%s.json", stamp(tick))
	}
	keep := map[string]bool{}
	commit := func(tmp, name string) error {
		if err := dest.Commit(ctx, tmp, name); err != nil {
			return err
		}
		keep[name] = true
		return jr.add(ctx, name)
	}
	done := 0
	if c.Layout == LayoutZip {
		for i := 0; i < len(items); i += 100 {
			chunk := items[i:min(i+100, len(items))]
			name := fmt.Sprintf("%s-%s-%03d.zip", c.Name, stamp(tick), i/100+1)
			arch, ts, skipped, err := e.archive(ctx, c, dest, name, chunk, commit)
			if err != nil {
				return nil, err
			}
			m.Archives = append(m.Archives, arch)
			m.Transcripts = append(m.Transcripts, ts...)
			m.Skipped = append(m.Skipped, skipped...)
			done += len(chunk)
			e.progress(done, len(items))
			renew()
			failpoint.Hit("export-archive")
		}
	} else {
		used := map[string]bool{}
		taken := func(name string) (bool, error) { // by this run, or by another run's file
			if used[name] {
				return true, nil
			}
			if mine[name] {
				return false, nil
			}
			return dest.Exists(ctx, name)
		}
		for _, it := range items {
			t, skip, err := e.single(ctx, c, dest, it, taken, commit)
			if err != nil {
				return nil, err
			}
			if skip != nil {
				m.Skipped = append(m.Skipped, *skip)
			} else {
				used[t.File] = true
				m.Transcripts = append(m.Transcripts, *t)
			}
			done++
			e.progress(done, len(items))
			if done%100 == 0 {
				renew()
				failpoint.Hit("export-archive")
			}
		}
	}
	m.Counts.Exported, m.Counts.Skipped = len(m.Transcripts), len(m.Skipped)
	m.WrittenAt = e.now()
	f, err := dest.Temp()
	if err != nil {
		return nil, err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	err = errors.Join(enc.Encode(m), f.Close())
	if err == nil {
		err = commit(f.Name(), manifest)
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := jr.finish(ctx, leftover, keep); err != nil {
		return nil, fmt.Errorf("clean %s: %w", dest, err)
	}
	return m, nil
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
		return "", 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, "", err
	}
	return f.Name(), n, hex.EncodeToString(h.Sum(nil)), nil
}

// archive writes one bulk ZIP and describes its entries. Ids the service skipped (deleted
// since listed) are found by comparing counts and asking for each.
func (e *Exporter) archive(ctx context.Context, c *Config, dest Destination, name string, chunk []api.ListItem, commit func(tmp, name string) error) (Archive, []Transcript, []Skipped, error) {
	ids := make([]string, len(chunk))
	for i, it := range chunk {
		ids[i] = it.ID
	}
	dl, err := e.API.ExportBulk(ctx, ids, c.Format)
	if err != nil {
		return Archive{}, nil, nil, fmt.Errorf("bulk export %s: %w", name, err)
	}
	tmp, size, sum, err := download(dest, dl.Body)
	dl.Body.Close()
	if err != nil {
		return Archive{}, nil, nil, fmt.Errorf("bulk export %s: %w", name, err)
	}
	entries, err := zipEntries(tmp)
	if err != nil {
		os.Remove(tmp)
		return Archive{}, nil, nil, fmt.Errorf("bulk export %s: %w", name, err)
	}
	present := chunk
	var skipped []Skipped
	if len(entries) != len(chunk) { // some ids were skipped: which ones?
		present = nil
		for _, it := range chunk {
			if _, err := e.API.Get(ctx, it.ID); errors.Is(err, api.ErrNotFound) {
				skipped = append(skipped, Skipped{ID: it.ID, Title: title(it), Reason: "deleted after it was listed"})
			} else if err != nil {
				os.Remove(tmp)
				return Archive{}, nil, nil, fmt.Errorf("bulk export %s: %w", name, err)
			} else {
				present = append(present, it)
			}
		}
		if len(present) != len(entries) {
			os.Remove(tmp)
			return Archive{}, nil, nil, fmt.Errorf("bulk export %s: %d files for %d transcripts", name, len(entries), len(present))
		}
	}
	var ts []Transcript
	for i, it := range present { // the service keeps the order of the ids
		ext := ""
		if it.ExternalID != nil {
			ext = *it.ExternalID
		}
		ts = append(ts, Transcript{ID: it.ID, Title: title(it), ExternalID: ext, File: entries[i].name, Archive: name,
			Size: entries[i].size, SHA256: entries[i].sha})
	}
	if err := commit(tmp, name); err != nil {
		os.Remove(tmp)
		return Archive{}, nil, nil, err
	}
	e.log().Info("export archive", "export", c.Name, "file", name, "transcripts", len(ts), "bytes", size)
	return Archive{File: name, Size: size, SHA256: sum, Count: len(ts)}, ts, skipped, nil
}

type entry struct {
	name string
	size int64
	sha  string
}

// zipEntries lists an archive's files with their sizes and SHA-256, reading them from disk.
func zipEntries(file string) ([]entry, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out []entry
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		out = append(out, entry{name: f.Name, size: n, sha: hex.EncodeToString(h.Sum(nil))})
	}
	return out, nil
}

// single writes one transcript as its own file, named after the service's file name, made
// unique within the run.
func (e *Exporter) single(ctx context.Context, c *Config, dest Destination, it api.ListItem, taken func(string) (bool, error), commit func(tmp, name string) error) (*Transcript, *Skipped, error) {
	dl, err := e.API.Export(ctx, it.ID, c.Format)
	if errors.Is(err, api.ErrNotFound) {
		return nil, &Skipped{ID: it.ID, Title: title(it), Reason: "deleted after it was listed"}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", it.ID, err)
	}
	tmp, size, sum, err := download(dest, dl.Body)
	dl.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", it.ID, err)
	}
	name, err := unique(safeName(dl.Filename, it.ID+"."+c.Format), taken)
	if err == nil {
		err = commit(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, nil, err
	}
	ext := ""
	if it.ExternalID != nil {
		ext = *it.ExternalID
	}
	return &Transcript{ID: it.ID, Title: title(it), ExternalID: ext, File: name, Size: size, SHA256: sum}, nil, nil
}

func title(it api.ListItem) string {
	if it.Title != nil {
		return *it.Title
	}
	return ""
}

// safeName keeps a file name's last element, without separators or control characters.
func safeName(name, fallback string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == '/' {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, "manifest") || strings.HasPrefix(name, ".") {
		return fallback
	}
	return name
}

// unique appends " (2)", " (3)"… before the extension until name is not taken.
func unique(name string, taken func(string) (bool, error)) (string, error) {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	out := name
	for n := 2; ; n++ {
		t, err := taken(out)
		if err != nil || !t {
			return out, err
		}
		out = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
}
