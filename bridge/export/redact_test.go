package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/export"
)

// sandboxPersonal finds the personal data the sandbox puts into transcripts
// (sandbox/personal.go).
var sandboxPersonal = regexp.MustCompile(`@example\.com|\+1 201-555-01|4[0-9]{3}( [0-9]{4}){3}|DE[0-9]{2}( [0-9]{4}){4}|192\.0\.2\.|2001:db8::`)

// TestExportRedaction exports the same transcripts redacted, as a ZIP of md files and as json
// files: no file holds the sandbox's personal data, each transcript's markers are counted in
// the manifest, and the checksums are those of the redacted files.
func TestExportRedaction(t *testing.T) {
	f := withStore(t, newFixture(t, 12))
	for _, layout := range []string{export.LayoutZip, export.LayoutFiles} {
		t.Run(layout, func(t *testing.T) {
			root := t.TempDir()
			c := &export.Config{Name: "private-" + layout, Schedule: "0 2 * * *", Format: "md", Layout: layout, Destination: root,
				Since: f.start.Format(time.RFC3339), Redact: []string{"email", "phone", "card", "iban", "ip"}}
			if layout == export.LayoutFiles {
				c.Format = "json"
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			m, err := f.ex.RunTick(context.Background(), c, time.Now().UTC().Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Transcripts) != 12 {
				t.Fatalf("exported %d transcripts, want 12", len(m.Transcripts))
			}
			files := exportedFiles(t, root, m)
			total := 0
			for _, tr := range m.Transcripts {
				body, ok := files[tr.Archive+"/"+tr.File]
				if !ok || sum(body) != tr.SHA256 {
					t.Errorf("%s/%s: missing or not matching its checksum", tr.Archive, tr.File)
				}
				if p := sandboxPersonal.FindString(string(body)); p != "" {
					t.Errorf("%s holds %q: %s", tr.File, p, body)
				}
				for kind, n := range tr.Redactions {
					if got := strings.Count(string(body), "["+kind+"]"); got != n {
						t.Errorf("%s: redactions[%s] = %d, want the %d markers of the file", tr.File, kind, n, got)
					}
					total += n
				}
			}
			if total < 12 {
				t.Errorf("%d redactions in all, want at least one per transcript", total)
			}
		})
	}
}

// exportedFiles reads what a run wrote, by "archive/file" (archive empty for layout files).
func exportedFiles(t *testing.T, root string, m *export.Manifest) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, tr := range m.Transcripts {
		if tr.Archive != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, tr.File))
		if err != nil {
			t.Fatal(err)
		}
		out["/"+tr.File] = b
	}
	for _, a := range m.Archives {
		b, err := os.ReadFile(filepath.Join(root, a.File))
		if err != nil {
			t.Fatal(err)
		}
		if sum(b) != a.SHA256 || int64(len(b)) != a.Size {
			t.Errorf("%s: checksum or size differs from the manifest", a.File)
		}
		z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, zf := range z.File {
			r, _ := zf.Open()
			body, _ := io.ReadAll(r)
			r.Close()
			out[a.File+"/"+zf.Name] = body
		}
	}
	return out
}
