package doccheck

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The two commands", "the-two-commands"},
		{"Health and metrics", "health-and-metrics"},
		{"`sources[] with type: localdir`", "sources-with-type-localdir"},
		{"Files, variables and flags", "files-variables-and-flags"},
		{"Who owns a recording: mapping", "who-owns-a-recording-mapping"},
		{"Scale-out: PostgreSQL, NATS and replicas", "scale-out-postgresql-nats-and-replicas"},
		{"The API client: `bridge api` and the Go package", "the-api-client-bridge-api-and-the-go-package"},
		{"[Zoom](zoom.md) (`type: zoom`)", "zoom-type-zoom"},
		{"snake_case über 2", "snake_case-über-2"},
	}
	for _, tc := range tests {
		if got := Slug(tc.in); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAnchorsRepeated(t *testing.T) {
	got := Anchors("# A\n\n## Notes\n\n```\n## Not a heading\n```\n\n## Notes\n")
	for _, want := range []string{"a", "notes", "notes-1"} {
		if !got[want] {
			t.Errorf("Anchors(...) = %v, want %q among them", got, want)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("Anchors(...) = %v: a line in a code block is no heading", got)
	}
}

// TestCheckFinds: each kind of broken reference is reported, and nothing else.
func TestCheckFinds(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\n## Next steps\n\n" +
			"[ok](docs/a.md) [ok anchor](docs/a.md#part-one) [self](#next-steps) [web](https://example.com/x#y)\n" +
			"[gone](docs/missing.md) [bad anchor](docs/a.md#part-two) [bad self](#nowhere)\n" +
			"`configs/x.yaml` `configs/missing.yaml` `design.md` `configs/<name>.yaml` `bridge run`\n" +
			"a span `across\nlines` then [a link](docs/gone.md) and `configs/gone.yaml`\n" +
			"\n```\n[in a fence](nothing.md) `configs/also-missing.yaml`\n```\n")},
		"docs/a.md":      {Data: []byte("# A\n\n## Part one\n\n[up](../README.md#top) [out](../../x.md) [dir](../configs/)\n")},
		"configs/x.yaml": {Data: []byte("a: 1\n")},
	}
	var got []string
	for _, p := range []string{"README.md", "docs/a.md"} {
		errs, err := Check(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			got = append(got, e.Error())
		}
	}
	want := []string{
		`README.md:6: link "docs/missing.md": no file docs/missing.md`,
		`README.md:6: link "docs/a.md#part-two": docs/a.md has no heading with the anchor #part-two`,
		`README.md:6: link "#nowhere": README.md has no heading with the anchor #nowhere`,
		`README.md:9: link "docs/gone.md": no file docs/gone.md`,
		"README.md:7: `configs/missing.yaml` is not a file of the repository",
		"README.md:7: `design.md` is not a file of the repository",
		"README.md:9: `configs/gone.yaml` is not a file of the repository",
		`docs/a.md:5: link "../../x.md": leads out of the repository`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check = \n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRepositoryDocs: the repository's own pages have no broken link, anchor or path.
func TestRepositoryDocs(t *testing.T) {
	fsys := os.DirFS("../..")
	pages, err := Pages(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 15 {
		t.Fatalf("Pages = %q, want README.md, SECURITY.md, BENCHMARKS.md and the docs", pages)
	}
	links := 0
	for _, p := range pages {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		links += len(Links(string(b)))
		errs, err := Check(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Error(e)
		}
	}
	if links < 50 {
		t.Fatalf("found %d links in %d pages; the extraction is broken", links, len(pages))
	}
}
