package gdrivetest_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// names returns the names of the files of a files.list answer, or of the files of a
// changes.list answer's changes.
func names(body map[string]any) []string {
	var out []string
	for _, k := range []string{"files", "changes"} {
		items, _ := body[k].([]any)
		for _, it := range items {
			m := it.(map[string]any)
			if f, ok := m["file"].(map[string]any); ok {
				m = f
			}
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestSharedDriveItemsNeedBothFlags: as "Implement shared drive support" documents, files.list
// and changes.list return a shared drive's items only to a caller sending both
// supportsAllDrives=true and includeItemsFromAllDrives=true; corpora=drive with driveId keeps
// that drive's; anything else gets My Drive's alone, with 200 (list.go).
func TestSharedDriveItemsNeedBothFlags(t *testing.T) {
	fake := gdrivetest.Start(t)
	fake.Put("mine.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("m"))
	folder := fake.Folder("Calls", "0ASales", "", "0ASales")
	fake.Put("sales.wav", "audio/wav", folder, "", "0ASales", []byte("s"))
	fake.Put("other.wav", "audio/wav", "0AOther", "", "0AOther", []byte("o"))
	c := client(t, fake, sam)
	const both = "&supportsAllDrives=true&includeItemsFromAllDrives=true"
	all, sales := []string{"Calls", "mine.wav", "other.wav", "sales.wav"}, []string{"Calls", "sales.wav"}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/files?q=trashed+%3D+false", []string{"mine.wav"}},
		{"/files?supportsAllDrives=true", []string{"mine.wav"}},
		{"/files?includeItemsFromAllDrives=true", []string{"mine.wav"}},
		{"/files?corpora=user" + both, all},
		{"/files?corpora=allDrives" + both, all},
		{"/files?corpora=drive&driveId=0ASales" + both, sales},
		{"/files?corpora=drive&driveId=0ASales", nil},
		{"/files?corpora=drive&driveId=0ASales&supportsAllDrives=true", nil},
		{"/changes?pageToken=1", []string{"mine.wav"}},
		{"/changes?pageToken=1&supportsAllDrives=true", []string{"mine.wav"}},
		{"/changes?pageToken=1" + both, all},
		{"/changes?pageToken=1&driveId=0ASales" + both, sales},
		{"/changes?pageToken=1&driveId=0ASales", nil},
	} {
		status, _, body := get(t, c, fake, tc.path)
		if got := names(body); status != http.StatusOK || !slices.Equal(got, tc.want) {
			t.Errorf("GET %s = %d %v, want 200 %v", tc.path, status, got, tc.want)
		}
	}
	// The file itself: not found without supportsAllDrives ("Resolve errors", notFound).
	id := fake.Put("get.wav", "audio/wav", "0ASales", "", "0ASales", []byte("g"))
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", http.StatusNotFound},
		{"?alt=media", http.StatusNotFound},
		{"?supportsAllDrives=true", http.StatusOK},
		{"?alt=media&supportsAllDrives=true", http.StatusOK},
	} {
		resp, err := c.Get(fake.URL + "/drive/v3/files/" + id + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("files.get %s%s = %d, want %d", id, tc.query, resp.StatusCode, tc.want)
		}
	}
}
