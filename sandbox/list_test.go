package sandbox

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

func TestListFilters(t *testing.T) {
	h := newHarness(t)
	type file struct {
		name, query string
		headers     map[string]string
		seconds     float64
	}
	files := []file{
		{"a.wav", "language=de&project_id=" + salesID, map[string]string{"X-External-Id": "crm-1", "X-Metadata": `{"deal":"D-1","n":7,"won":true}`}, 10},
		{"b.wav", "language=en", map[string]string{"X-External-Id": "crm-2", "X-Metadata": `{"deal":"D-2"}`}, 30},
		{"c.wav", "", map[string]string{"X-External-Id": "crm-1"}, 20},
		{"d.wav", "", nil, 5},
	}
	ids := map[string]string{}
	for i, f := range files {
		ids[f.name] = h.mustUpload(ownerKey, f.name, f.query, wav(f.seconds, 0, uint64(i)), f.headers)
		h.waitDone(ownerKey, ids[f.name])
		h.clock.Advance(time.Second) // distinct creation times
	}
	failed := h.mustUpload(ownerKey, "bad.mp3", "", make([]byte, 2000), nil)
	h.waitDone(ownerKey, failed)

	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"d.wav", "c.wav", "b.wav", "a.wav"}}, // default: completed, newest first
		{"status=failed", []string{"bad.mp3"}},
		{"status=nonsense", nil},
		{"external_id=crm-1", []string{"c.wav", "a.wav"}},
		{"external_id=CRM-1", nil},
		{"metadata.deal=D-2", []string{"b.wav"}},
		{"metadata.n=7", []string{"a.wav"}},
		{"metadata.won=true", []string{"a.wav"}},
		{"metadata.deal=D", nil},
		{"project_id=" + salesID, []string{"a.wav"}},
		{"language=de", []string{"a.wav"}},
		{"language=en&external_id=crm-1", []string{"c.wav"}},
		{"sort=created_at", []string{"a.wav", "b.wav", "c.wav", "d.wav"}},
		{"sort=duration", []string{"d.wav", "a.wav", "c.wav", "b.wav"}},
		{"sort=-duration", []string{"b.wav", "c.wav", "a.wav", "d.wav"}},
		{"sort=created_at&limit=2&offset=1", []string{"b.wav", "c.wav"}},
		{"date_from=" + h.clock.Now().UTC().Format("2006-01-02"), []string{"d.wav", "c.wav", "b.wav", "a.wav"}},
		{"date_to=" + h.clock.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02"), nil},
		{"date_from=" + h.clock.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02"), nil},
	}
	names := map[string]string{}
	for n, id := range ids {
		names[id] = n
	}
	names[failed] = "bad.mp3"
	for _, tc := range tests {
		var page struct {
			Items                []listItemJSON
			Total, Limit, Offset int
		}
		r := h.get(ownerKey, "/transcriptions?"+tc.query)
		if r.status != 200 {
			t.Errorf("list %q = %d %s", tc.query, r.status, r.body)
			continue
		}
		r.json(t, &page)
		var got []string
		for _, it := range page.Items {
			got = append(got, names[it.ID])
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("list %q = %v, want %v", tc.query, got, tc.want)
		}
	}
	// total counts across pages; limit and offset echo the values used (clamped).
	for _, tc := range []struct {
		query                string
		total, limit, offset int
		items                int
	}{
		{"limit=1", 4, 1, 0, 1},
		{"limit=0", 4, 1, 0, 1},
		{"limit=1000", 4, 100, 0, 4},
		{"limit=-5&offset=-3", 4, 1, 0, 1},
		{"offset=3", 4, 20, 3, 1},
		{"offset=10", 4, 20, 10, 0},
	} {
		var page struct {
			Items                []listItemJSON
			Total, Limit, Offset int
		}
		h.get(ownerKey, "/transcriptions?"+tc.query).json(t, &page)
		if page.Total != tc.total || page.Limit != tc.limit || page.Offset != tc.offset || len(page.Items) != tc.items {
			t.Errorf("list %q = total %d limit %d offset %d items %d, want %d %d %d %d", tc.query,
				page.Total, page.Limit, page.Offset, len(page.Items), tc.total, tc.limit, tc.offset, tc.items)
		}
	}
	for _, tc := range []struct{ query, code string }{
		{"sort=title", "invalid_sort"},
		{"date_from=2026-13-01", "invalid_date"},
		{"limit=ten", "invalid_parameter"},
		{"metadata.a=1&metadata.b=2", "invalid_metadata_filter"},
	} {
		if r := h.get(ownerKey, "/transcriptions?"+tc.query); r.status != 422 || r.code() != tc.code {
			t.Errorf("list %q = %d %s, want 422 %s", tc.query, r.status, r.code(), tc.code)
		}
	}
	// A list item has no text, segments or prompt_results; another workspace sees nothing.
	r := h.get(ownerKey, "/transcriptions?limit=1")
	item := r.m()["items"].([]any)[0].(map[string]any)
	for _, k := range []string{"text", "segments", "prompt_results"} {
		if _, ok := item[k]; ok {
			t.Errorf("list item carries %q", k)
		}
	}
	var other struct{ Total int }
	h.get(otherKey, "/transcriptions?external_id="+url.QueryEscape("crm-1")).json(t, &other)
	if other.Total != 0 {
		t.Errorf("another workspace lists %d of ours", other.Total)
	}
}
