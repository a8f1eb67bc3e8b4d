package export

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/redact"
	"github.com/transcript-bridge/bridge/internal/failpoint"
)

// writeArchives writes items as bulk ZIP archives of at most 100 transcripts, renewing the
// run's lease after each.
func (rw *runWriter) writeArchives(ctx context.Context, items []api.ListItem) error {
	c, m, done := rw.c, rw.m, 0
	for i := 0; i < len(items); i += 100 {
		chunk := items[i:min(i+100, len(items))]
		name := fmt.Sprintf("%s-%s-%03d.zip", c.Name, stamp(rw.tick), i/100+1)
		arch, ts, skipped, err := rw.e.archive(ctx, c, rw.dest, name, chunk, rw.committer(ctx))
		if err != nil {
			return err
		}
		m.Archives = append(m.Archives, arch)
		m.Transcripts = append(m.Transcripts, ts...)
		m.Skipped = append(m.Skipped, skipped...)
		done += len(chunk)
		rw.e.progress(done, len(items))
		rw.renew()
		failpoint.Hit("export-archive")
	}
	return nil
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
	var counts []redact.Counts
	if c.redacts() {
		if counts, err = c.redactZip(dest, tmp); err == nil {
			size, sum, err = fileSum(tmp)
		}
	}
	var entries []entry
	if err == nil {
		entries, err = zipEntries(tmp)
	}
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
				skipped = append(skipped, Skipped{ID: it.ID, Title: c.redactTitle(title(it), nil), Reason: "deleted after it was listed"})
				e.gone(ctx, it.ID)
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
		t := Transcript{ID: it.ID, Title: c.redactTitle(title(it), nil), ExternalID: ext, File: entries[i].name, Archive: name,
			Size: entries[i].size, SHA256: entries[i].sha}
		if counts != nil {
			t.Redactions = counts[i]
		}
		ts = append(ts, t)
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
