// Package doccheck checks the repository's Markdown pages the way a reader meets them: every
// relative link and #anchor leads to a file and heading that exist (GitHub's anchor rules), and
// every repository path a page names in code (`configs/examples/x.yaml`, `SECURITY.md`) is in
// the repository. External links are not fetched. Its test runs it over README.md, SECURITY.md,
// BENCHMARKS.md and docs/**.md.
package doccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Pages lists the Markdown pages a reader of the repository reads: README.md, SECURITY.md,
// BENCHMARKS.md and every .md file under docs/, sorted.
func Pages(fsys fs.FS) ([]string, error) {
	var out []string
	for _, p := range []string{"README.md", "SECURITY.md", "BENCHMARKS.md"} {
		if _, err := fs.Stat(fsys, p); err == nil {
			out = append(out, p)
		}
	}
	err := fs.WalkDir(fsys, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list docs: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// Slug is the anchor GitHub gives a heading: the heading's text lowercased, every character
// but letters, digits, marks, connector punctuation ('_'), spaces and hyphens removed, and each
// space a hyphen. Inline code keeps its text and a link its label.
func Slug(heading string) string {
	heading = linkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Block is a paragraph of a page outside fenced code blocks: consecutive non-blank lines, kept
// with their line breaks (a code span or link may run across them), and its first line's
// number (from 1).
type Block struct {
	Line int
	Text string
}

// prose returns the paragraphs of a page outside fenced code blocks; a heading is a paragraph
// of its own.
func prose(text string) []Block {
	var out []Block
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, Block{start, strings.Join(cur, "\n")})
			cur = nil
		}
	}
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			flush()
			fence = t[:3]
		case t == "":
			flush()
		case headingRE.MatchString(line):
			flush()
			out = append(out, Block{n, line})
		default:
			if len(cur) == 0 {
				start = n
			}
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

// lineOf is the line, in the page, of the byte at i of block b.
func (b Block) lineOf(i int) int { return b.Line + strings.Count(b.Text[:i], "\n") }

// Anchors returns the anchors of a page's headings: each heading's Slug, and a repeated one
// suffixed -1, -2, … as GitHub does.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, b := range prose(text) {
		m := headingRE.FindStringSubmatch(b.Text)
		if m == nil {
			continue
		}
		s := Slug(strings.TrimSpace(strings.TrimRight(m[1], "# ")))
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	codeRE    = regexp.MustCompile("`([^`]+)`")
)

// Ref is a link target or a path named in code, where the page names it.
type Ref struct {
	Line   int
	Target string
}

// Links returns the targets of a page's inline links and images outside code.
func Links(text string) []Ref {
	var out []Ref
	for _, b := range prose(text) {
		// Blank out code spans, keeping every byte's place (and line breaks).
		masked := codeRE.ReplaceAllStringFunc(b.Text, func(span string) string {
			return strings.Map(func(r rune) rune {
				if r == '\n' {
					return r
				}
				return ' '
			}, span)
		})
		for _, m := range linkRE.FindAllStringSubmatchIndex(masked, -1) {
			out = append(out, Ref{b.lineOf(m[0]), masked[m[4]:m[5]]})
		}
	}
	return out
}

// CodeSpans returns the inline code spans of a page outside fenced blocks, a span broken
// across lines joined with single spaces, each with the line it starts on.
func CodeSpans(text string) []Ref {
	var out []Ref
	for _, b := range prose(text) {
		for _, m := range codeRE.FindAllStringSubmatchIndex(b.Text, -1) {
			out = append(out, Ref{b.lineOf(m[0]), strings.Join(strings.Fields(b.Text[m[2]:m[3]]), " ")})
		}
	}
	return out
}

// CodePaths returns what a page's inline code names as a repository file: a span without
// spaces or placeholders whose first segment is one of topLevel's folders
// (`configs/examples/x.yaml`, `bridge/relay/webhook`), or a bare `NAME.md`.
func CodePaths(text string, topLevel map[string]bool) []Ref {
	var out []Ref
	for _, b := range prose(text) {
		for _, m := range codeRE.FindAllStringSubmatchIndex(b.Text, -1) {
			p := strings.TrimRight(strings.TrimPrefix(b.Text[m[2]:m[3]], "./"), ".,:;")
			if p == "" || strings.ContainsAny(p, " \t\n<>*{}[]…$|=?") || strings.HasPrefix(p, "/") || strings.Contains(p, "://") {
				continue
			}
			first, _, nested := strings.Cut(p, "/")
			if nested && topLevel[first] || !nested && strings.HasSuffix(p, ".md") {
				out = append(out, Ref{b.lineOf(m[0]), p})
			}
		}
	}
	return out
}

// Check returns one error per broken reference of the page at name in fsys (the repository):
// a relative link to a file that does not exist, an anchor no heading of its page has, a path
// in code that is not in the repository. http(s) and mailto links are not checked.
func Check(fsys fs.FS, name string) ([]error, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	text := string(b)
	dir := path.Dir(name)
	var errs []error
	for _, r := range Links(text) {
		if err := checkLink(fsys, name, dir, text, r.Target); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %w", name, r.Line, r.Target, err))
		}
	}
	top, err := topLevelDirs(fsys)
	if err != nil {
		return nil, err
	}
	for _, r := range CodePaths(text, top) {
		_, errRoot := fs.Stat(fsys, strings.TrimSuffix(r.Target, "/"))
		_, errHere := fs.Stat(fsys, path.Join(dir, strings.TrimSuffix(r.Target, "/")))
		if errRoot != nil && errHere != nil {
			errs = append(errs, fmt.Errorf("%s:%d: `%s` is not a file of the repository", name, r.Line, r.Target))
		}
	}
	return errs, nil
}

// checkLink resolves one link target of the page name (in dir, with text).
func checkLink(fsys fs.FS, name, dir, text, target string) error {
	if target == "" {
		return fmt.Errorf("empty target")
	}
	if i := strings.Index(target, ":"); i > 0 && !strings.ContainsAny(target[:i], "/#.") {
		return nil // a scheme: http, https, mailto
	}
	file, anchor, _ := strings.Cut(target, "#")
	if strings.HasPrefix(file, "/") {
		return fmt.Errorf("absolute path: use one relative to %s", name)
	}
	p := name
	if file != "" {
		p = path.Join(dir, file)
		if strings.HasPrefix(p, "../") || p == ".." {
			return fmt.Errorf("leads out of the repository")
		}
		if _, err := fs.Stat(fsys, strings.TrimSuffix(p, "/")); err != nil {
			return fmt.Errorf("no file %s", p)
		}
	}
	if anchor == "" {
		return nil
	}
	if !strings.HasSuffix(p, ".md") {
		return fmt.Errorf("an anchor into %s, which is not a Markdown page", p)
	}
	if p != name {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		text = string(b)
	}
	if !Anchors(text)[anchor] {
		return fmt.Errorf("%s has no heading with the anchor #%s", p, anchor)
	}
	return nil
}

// topLevelDirs are the repository's top-level folders, the first segments CodePaths checks.
func topLevelDirs(fsys fs.FS) (map[string]bool, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read the repository's top level: %w", err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "data" && e.Name() != "inbox" {
			out[e.Name()] = true
		}
	}
	return out, nil
}
