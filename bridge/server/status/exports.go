package status

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// runView is one export run as the page shows it.
type runView struct {
	bridge.ExportRun
	// State is the run's status at now (a running run whose lease ran out was interrupted).
	State string
}

// exports is GET /exports: the latest runs of every export, newest first, each linking to its
// manifest.
func (p *Page) exports(w http.ResponseWriter, r *http.Request, s *session) error {
	runs, err := p.o.Store.Runs(r.Context(), "", maxListed)
	if err != nil {
		return err
	}
	now := p.now()
	out := make([]runView, 0, len(runs))
	for _, run := range runs {
		run.Error = api.Redact(run.Error)
		out = append(out, runView{ExportRun: run, State: string(run.State(now))})
	}
	return p.render(w, r, s, http.StatusOK, "exports.html", "Exports", out)
}

// manifestView is a run's manifest, or why it cannot be shown.
type manifestView struct {
	Run      runView
	Manifest *export.Manifest
	Err      string
}

// manifest is GET /exports/manifest?export=&tick=: the manifest the run wrote at its location.
func (p *Page) manifest(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	tick, err := time.Parse(time.RFC3339, q.Get("tick"))
	if err != nil {
		return refuse(http.StatusBadRequest, "tick %q: want an RFC 3339 time", q.Get("tick"))
	}
	runs, err := p.o.Store.Runs(r.Context(), q.Get("export"), 0)
	if err != nil {
		return err
	}
	v := manifestView{}
	for _, run := range runs {
		if run.Tick.Equal(tick) {
			v.Run = runView{ExportRun: run, State: string(run.State(p.now()))}
		}
	}
	if v.Run.Export == "" {
		return refuse(http.StatusNotFound, "export %q has no run at %s", q.Get("export"), tick.Format(time.RFC3339))
	}
	if v.Manifest, err = p.readManifest(r.Context(), v.Run.ExportRun); err != nil {
		v.Err = api.Redact(err.Error())
	}
	return p.render(w, r, s, http.StatusOK, "manifest.html", "Manifest of "+v.Run.Export, v)
}

// readManifest reads the manifest of run from its location: a folder's file, or through the
// export's S3 destination. It fails when the run wrote none there or it does not parse.
func (p *Page) readManifest(ctx context.Context, run bridge.ExportRun) (*export.Manifest, error) {
	var b []byte
	var err error
	if strings.HasPrefix(run.Location, "s3://") {
		b, err = p.readS3(ctx, run)
	} else {
		b, err = os.ReadFile(filepath.Join(run.Location, export.ManifestName))
	}
	if err != nil {
		return nil, fmt.Errorf("manifest of %s at %s: %w", run.Export, run.Location, err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest of %s at %s: %w", run.Export, run.Location, err)
	}
	return &m, nil
}

// readS3 reads the manifest of a run on S3 with its export's S3 settings.
func (p *Page) readS3(ctx context.Context, run bridge.ExportRun) ([]byte, error) {
	for _, c := range p.o.Exports {
		if c.Name != run.Export {
			continue
		}
		d, err := export.Open(ctx, c, run.Location)
		if err != nil {
			return nil, err
		}
		return d.Read(ctx, export.ManifestName)
	}
	return nil, fmt.Errorf("export %q is no longer configured: its S3 settings are unknown", run.Export)
}
