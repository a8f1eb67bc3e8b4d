package sandbox

import (
	"archive/zip"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const bom = "\ufeff"

// exportSource is the constant label in the Markdown frontmatter's source key.
const exportSource = "Transcription API"

var exportTypes = map[string]string{
	"md":   "text/markdown; charset=utf-8",
	"txt":  "text/plain; charset=utf-8",
	"json": "application/json; charset=utf-8",
}

// renderExport returns the file of one transcription in format (md, txt, json); f is its full
// record, read at the same moment as t.
func renderExport(t *record, f *fullJSON, format string) ([]byte, error) {
	switch format {
	case "json":
		return json.Marshal(f)
	case "txt":
		return []byte(bom + t.Text.String + "\n"), nil
	}
	var b strings.Builder
	b.WriteString(bom + "---\n")
	fmt.Fprintf(&b, "title: %s\n", yamlString(t.Title))
	fmt.Fprintf(&b, "date: %s\n", time.Unix(0, t.CreatedAt).UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "language: %s\n", yamlString(t.Language.String))
	d := int(t.Duration.Float64 + 0.5)
	fmt.Fprintf(&b, "duration: %dm %ds\n", d/60, d%60)
	b.WriteString("speakers:")
	if len(f.Speakers) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, sp := range f.Speakers {
		fmt.Fprintf(&b, "  - %s\n", yamlString(deref(sp.Name)))
	}
	b.WriteString("topics:")
	if len(f.Topics) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, tp := range f.Topics {
		fmt.Fprintf(&b, "  - %s\n", yamlString(tp.Title))
	}
	fmt.Fprintf(&b, "source: %s\n---\n\n", yamlString(exportSource))
	fmt.Fprintf(&b, "# %s\n\n", t.Title)
	if t.Summary.Valid {
		fmt.Fprintf(&b, "## Summary\n\n%s\n\n", t.Summary.String)
	}
	for _, rep := range f.PromptResults {
		if rep.Status == "completed" {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", deref(rep.Name), deref(rep.Text))
		}
	}
	fmt.Fprintf(&b, "## Transcript\n\n%s\n", t.Text.String)
	return []byte(b.String()), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// yamlString quotes s as a YAML double-quoted scalar (JSON strings are valid YAML).
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// exportName turns a title into a safe file name with extension ext.
func exportName(title, ext string) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, strings.TrimSpace(title))
	if name == "" {
		name = "transcription"
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name + "." + ext
}

// contentDisposition gives an attachment header with an ASCII fallback and the RFC 5987 form.
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r > 0x7e || r < 0x20 || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	if ascii == name {
		return fmt.Sprintf(`attachment; filename="%s"`, name)
	}
	return fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, ascii, url.PathEscape(name))
}

func exportFormat(w http.ResponseWriter, r *http.Request, format string) (string, bool) {
	if format == "" {
		return "md", true
	}
	if _, ok := exportTypes[format]; !ok {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_export_format", fmt.Sprintf("format %q is not md, txt or json", format), map[string]any{"format": format})
		return "", false
	}
	return format, true
}

func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	format, ok := exportFormat(w, r, r.URL.Query().Get("format"))
	if !ok {
		return
	}
	t, f, err := s.readFull(r.Context(), p.workspaceID, r.PathValue("id"))
	if checkRecord(w, r, t, err, false) == nil {
		return
	}
	body, err := renderExport(t, f, format)
	if err != nil {
		internalError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", exportTypes[format])
	w.Header().Set("Content-Disposition", contentDisposition(exportName(t.Title, format)))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func (s *Server) handleBulkExport(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	var body struct {
		IDs    []string `json:"ids"`
		Format string   `json:"format"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_body", "body must be {\"ids\": [uuid, ...], \"format\": \"md\"|\"txt\"|\"json\"}", nil)
		return
	}
	if len(body.IDs) < 1 || len(body.IDs) > 100 {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_ids", fmt.Sprintf("ids must hold 1 to 100 ids, not %d", len(body.IDs)), map[string]any{"count": len(body.IDs)})
		return
	}
	format, ok := exportFormat(w, r, body.Format)
	if !ok {
		return
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	used := map[string]bool{}
	seen := map[string]bool{}
	ctx := r.Context()
	// Every file is read at one moment, each record with its own reports.
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		for _, id := range body.IDs {
			id = strings.ToLower(id)
			if seen[id] {
				continue
			}
			seen[id] = true
			t, err := loadRecord(ctx, tx, p.workspaceID, id)
			if err != nil {
				return fmt.Errorf("read transcription %s: %w", id, err)
			}
			s.afterRecordRead()
			if t == nil || t.Locked {
				continue // unknown and foreign ids are skipped silently
			}
			f, err := s.full(ctx, tx, t)
			if err != nil {
				return fmt.Errorf("read transcription %s: %w", id, err)
			}
			data, err := renderExport(t, f, format)
			if err != nil {
				return fmt.Errorf("render transcription %s: %w", id, err)
			}
			name := uniqueName(exportName(t.Title, format), used)
			fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Unix(0, t.UpdatedAt).UTC()})
			if err != nil {
				return fmt.Errorf("zip %s: %w", name, err)
			}
			if _, err := fw.Write(data); err != nil {
				return fmt.Errorf("zip %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	if err := zw.Close(); err != nil {
		internalError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="transcriptions.zip"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// uniqueName appends " (2)", " (3)" ... before the extension until name is unused.
func uniqueName(name string, used map[string]bool) string {
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		base, ext = name[:i], name[i:]
	}
	candidate := name
	for n := 2; used[strings.ToLower(candidate)]; n++ {
		candidate = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	used[strings.ToLower(candidate)] = true
	return candidate
}
