package sandbox

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestExportFormats(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "Weekly sync.wav", "ai_metadata=true&reports=summary,broken", wav(125, 0, 1), nil)
	rec := h.waitDone(ownerKey, id)
	title := rec["title"].(string)

	// md: BOM, frontmatter with the documented keys, heading, summary, completed reports only,
	// transcript.
	r := h.get(ownerKey, "/transcriptions/"+id+"/export")
	if r.status != 200 || r.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Fatalf("md export = %d %s", r.status, r.header.Get("Content-Type"))
	}
	if cd := r.header.Get("Content-Disposition"); cd != fmt.Sprintf(`attachment; filename="%s.md"`, title) {
		t.Errorf("md Content-Disposition = %q", cd)
	}
	var want strings.Builder
	want.WriteString("\ufeff---\n")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	fmt.Fprintf(&want, "title: %s\ndate: %s\nlanguage: \"en\"\nduration: 2m 5s\nspeakers:\n", q(title), time.Now().UTC().Format("2006-01-02"))
	for _, s := range rec["speakers"].([]any) {
		fmt.Fprintf(&want, "  - %s\n", q(s.(map[string]any)["name"].(string)))
	}
	want.WriteString("topics:\n")
	for _, tp := range rec["topics"].([]any) {
		fmt.Fprintf(&want, "  - %s\n", q(tp.(map[string]any)["title"].(string)))
	}
	fmt.Fprintf(&want, "source: %s\n---\n\n# %s\n\n## Summary\n\n%s\n\n", q(exportSource), title, rec["summary"])
	var failed int
	for _, rp := range rec["prompt_results"].([]any) {
		rep := rp.(map[string]any)
		if rep["status"] == "completed" {
			fmt.Fprintf(&want, "## %s\n\n%s\n\n", rep["name"], rep["text"])
		} else {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("the broken template gave %d failed reports, want 1", failed)
	}
	fmt.Fprintf(&want, "## Transcript\n\n%s\n", rec["text"])
	if string(r.body) != want.String() {
		t.Errorf("md export:\n%s\nwant:\n%s", r.body, want.String())
	}
	if bytes.Contains(r.body, []byte("## Broken")) {
		t.Errorf("md export includes a failed report")
	}

	// txt: BOM and the transcript text.
	r = h.get(ownerKey, "/transcriptions/"+id+"/export?format=txt")
	if r.header.Get("Content-Type") != "text/plain; charset=utf-8" || string(r.body) != "\ufeff"+rec["text"].(string)+"\n" {
		t.Errorf("txt export = %s %q", r.header.Get("Content-Type"), r.body)
	}
	if !strings.HasSuffix(r.header.Get("Content-Disposition"), `.txt"`) {
		t.Errorf("txt Content-Disposition = %q", r.header.Get("Content-Disposition"))
	}

	// json: exactly the GET body, without BOM.
	r = h.get(ownerKey, "/transcriptions/"+id+"/export?format=json")
	get := h.get(ownerKey, "/transcriptions/"+id)
	if r.header.Get("Content-Type") != "application/json; charset=utf-8" || !bytes.Equal(bytes.TrimSpace(r.body), bytes.TrimSpace(get.body)) {
		t.Errorf("json export differs from GET:\n%s\n%s", r.body, get.body)
	}
	if bytes.HasPrefix(r.body, []byte("\ufeff")) {
		t.Errorf("json export starts with a BOM")
	}
	if r := h.get(ownerKey, "/transcriptions/"+id+"/export?format=pdf"); r.status != 422 || r.code() != "invalid_export_format" {
		t.Errorf("format=pdf = %d %s, want 422 invalid_export_format", r.status, r.code())
	}
}

func TestExportNonASCIIName(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "", "", wav(2, 0, 1), map[string]string{
		"Content-Disposition": "attachment; filename*=UTF-8''%C3%9Cbersicht%3A%20Q3.wav"})
	h.waitDone(ownerKey, id)
	r := h.get(ownerKey, "/transcriptions/"+id+"/export?format=txt")
	want := `attachment; filename="_bersicht_ Q3.wav.txt"; filename*=UTF-8''%C3%9Cbersicht_%20Q3.wav.txt`
	if got := r.header.Get("Content-Disposition"); got != want {
		t.Errorf("Content-Disposition = %q, want %q", got, want)
	}
}

func TestBulkExport(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for i, name := range []string{"Standup.wav", "Standup.wav", "Standup.wav", "Retro.wav"} {
		id := h.mustUpload(ownerKey, name, "", wav(2, 0, uint64(i)), nil)
		h.waitDone(ownerKey, id)
		ids = append(ids, id)
	}
	foreign := h.mustUpload(otherKey, "Theirs.wav", "", wav(2, 0, 9), nil)
	h.waitDone(otherKey, foreign)
	body := map[string]any{"ids": append(append([]string{}, ids...), "aaaaaaaa-0000-4000-8000-00000000ffff", foreign), "format": "txt"}
	r := h.do(req{method: "POST", path: "/transcriptions/export", key: ownerKey, jsonBody: body})
	if r.status != 200 || r.header.Get("Content-Type") != "application/zip" || r.header.Get("Content-Disposition") != `attachment; filename="transcriptions.zip"` {
		t.Fatalf("bulk export = %d %s %s", r.status, r.header.Get("Content-Type"), r.header.Get("Content-Disposition"))
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.HasPrefix(b, []byte("\ufeff[00:00] ")) {
			t.Errorf("%s starts %q, want a BOM and the transcript", f.Name, b[:min(len(b), 20)])
		}
	}
	sort.Strings(names)
	want := []string{"Retro.wav.txt", "Standup.wav (2).txt", "Standup.wav (3).txt", "Standup.wav.txt"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("zip names = %q, want %q (unknown and foreign ids skipped)", names, want)
	}
	// md is the default format.
	r = h.do(req{method: "POST", path: "/transcriptions/export", key: ownerKey, jsonBody: map[string]any{"ids": ids[3:]}})
	zr, _ = zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if len(zr.File) != 1 || zr.File[0].Name != "Retro.wav.md" {
		t.Errorf("default bulk format gave %v", zr.File)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = ids[0]
	}
	for _, tc := range []struct {
		body any
		code string
	}{
		{map[string]any{"ids": []string{}}, "invalid_ids"},
		{map[string]any{}, "invalid_ids"},
		{map[string]any{"ids": many}, "invalid_ids"},
		{map[string]any{"ids": ids[:1], "format": "docx"}, "invalid_export_format"},
	} {
		if r := h.do(req{method: "POST", path: "/transcriptions/export", key: ownerKey, jsonBody: tc.body}); r.status != 422 || r.code() != tc.code {
			t.Errorf("bulk %v = %d %s, want 422 %s", tc.body, r.status, r.code(), tc.code)
		}
	}
}
