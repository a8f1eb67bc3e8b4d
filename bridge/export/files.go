package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/failpoint"
)

// writeFiles writes items one file each, each name unique at the destination, renewing the
// run's lease every 100.
func (rw *runWriter) writeFiles(ctx context.Context, items []api.ListItem) error {
	m, done := rw.m, 0
	used := map[string]bool{}
	taken := func(name string) (bool, error) { // by this run, or by another run's file
		if used[name] {
			return true, nil
		}
		if rw.mine[name] {
			return false, nil
		}
		return rw.dest.Exists(ctx, name)
	}
	for _, it := range items {
		t, skip, err := rw.e.single(ctx, rw.c, rw.dest, it, taken, rw.committer(ctx))
		if err != nil {
			return err
		}
		if skip != nil {
			m.Skipped = append(m.Skipped, *skip)
		} else {
			used[t.File] = true
			m.Transcripts = append(m.Transcripts, *t)
		}
		done++
		rw.e.progress(done, len(items))
		if done%100 == 0 {
			rw.renew()
			failpoint.Hit("export-archive")
		}
	}
	return nil
}

// single writes one transcript as its own file, named after the service's file name, made
// unique within the run.
func (e *Exporter) single(ctx context.Context, c *Config, dest Destination, it api.ListItem, taken func(string) (bool, error), commit func(tmp, name string) error) (*Transcript, *Skipped, error) {
	dl, err := e.API.Export(ctx, it.ID, c.Format)
	if errors.Is(err, api.ErrNotFound) {
		e.gone(ctx, it.ID)
		return nil, &Skipped{ID: it.ID, Title: c.redactTitle(title(it), nil), Reason: "deleted after it was listed"}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", it.ID, err)
	}
	body, counts, err := c.redactDownload(dl.Body)
	var tmp, sum string
	var size int64
	if err == nil {
		tmp, size, sum, err = download(dest, body)
	}
	dl.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", it.ID, err)
	}
	name, err := unique(safeName(c.redactName(dl.Filename), it.ID+"."+c.Format), taken)
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
	return &Transcript{ID: it.ID, Title: c.redactTitle(title(it), nil), ExternalID: ext, File: name, Size: size, SHA256: sum,
		Redactions: counts}, nil, nil
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
