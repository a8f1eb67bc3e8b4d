package main

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/pflag"

	"github.com/transcript-bridge/bridge/internal/doccheck"
)

// readmeCommand is one `bridge …` command shown in the README, with where it stands.
type readmeCommand struct {
	line int
	args []string
}

// readmeCommands extracts the bridge commands of a Markdown text: lines of fenced blocks that
// run `go run ./cmd/bridge …` or `bridge …` (after a `$ ` prompt or not), and inline code spans
// (also those broken across lines) that begin with `bridge `. Pipes, redirections and trailing comments are cut off; a
// trailing backslash continues the line; the brackets of synopsis notation
// ("[--limit N]") are dropped.
func readmeCommands(text string) []readmeCommand {
	var out []readmeCommand
	for _, span := range doccheck.CodeSpans(text) {
		if strings.HasPrefix(span.Target, "bridge ") {
			out = append(out, readmeCommand{span.Line, shellWords(synopsis.Replace(span.Target))[1:]})
		}
	}
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			continue
		}
		start := n
		for strings.HasSuffix(line, "\\") && sc.Scan() {
			line = strings.TrimSuffix(line, "\\") + " " + sc.Text()
			n++
		}
		cmd := synopsis.Replace(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
		for _, prefix := range []string{"go run ./cmd/bridge ", "bridge "} {
			if rest, ok := strings.CutPrefix(cmd, prefix); ok {
				out = append(out, readmeCommand{start, shellWords(rest)})
			}
		}
	}
	return out
}

// synopsis drops the brackets of optional parts in a usage line.
var synopsis = strings.NewReplacer("[", "", "]", "")

// shellWords splits a command line the way a POSIX shell would for these examples: quotes
// group, and a comment, pipe or redirection ends the command.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case (r == '#' || r == '|' || r == '>' || r == '&' || r == ';') && !inWord:
			return words
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"jobs list", []string{"jobs", "list"}},
		{"run --once          # or without --once", []string{"run", "--once"}},
		{`api upload "a b.wav" --author 'email:x@y'`, []string{"api", "upload", "a b.wav", "--author", "email:x@y"}},
		{"jobs list -o json | jq .", []string{"jobs", "list", "-o", "json"}},
		{"webhooks sign > out.txt", []string{"webhooks", "sign"}},
		{"api get a#b", []string{"api", "get", "a#b"}},
	}
	for _, tc := range tests {
		if got := shellWords(tc.in); strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("shellWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// docPages returns the Markdown pages a reader follows (README.md, SECURITY.md, BENCHMARKS.md,
// docs/**.md) with their text, relative to the repository's root.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	fsys := os.DirFS("../..")
	names, err := doccheck.Pages(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	if out["README.md"] == "" || len(out) < 15 {
		t.Fatalf("doccheck.Pages = %d pages; want README.md and the docs", len(out))
	}
	return out
}

// TestREADMECommands: every bridge command the README and the docs pages show names a command
// that exists, with flags it takes and the number of arguments it wants. A renamed command or
// flag fails here. (The examples' behaviour is run by the scripts under testdata/script.)
func TestREADMECommands(t *testing.T) {
	total := 0
	for page, text := range docPages(t) {
		cmds := readmeCommands(text)
		total += len(cmds)
		for _, c := range cmds {
			if err := checkCommand(c.args); err != nil {
				t.Errorf("%s:%d: bridge %s: %v", page, c.line, strings.Join(c.args, " "), err)
			}
		}
	}
	if total < 100 {
		t.Fatalf("found %d bridge commands in README.md and docs/; the extraction is broken", total)
	}
}

// checkCommand parses args as the bridge would: the command exists, takes these flags and this
// many arguments.
func checkCommand(args []string) error {
	if len(args) == 0 {
		return nil // "bridge" alone, in prose
	}
	root := newRootCmd(io.Discard, io.Discard)
	strictArgs(root)
	cmd, rest, err := root.Find(args)
	if err == nil && cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		err = errUnknown(rest[0])
	}
	if err == nil {
		cmd.InitDefaultHelpFlag()
		root.InitDefaultVersionFlag()
		if err = cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
			return nil // --help is every command's
		}
	}
	if err == nil && cmd.Args != nil && cmd.Runnable() {
		err = cmd.ValidateArgs(cmd.Flags().Args())
	}
	return err
}

type errUnknown string

func (e errUnknown) Error() string { return "unknown command " + string(e) }

// TestREADMEPaths: every repository path the README and the docs pages name in code
// (`configs/…`, `bridge/…`) exists. (internal/doccheck checks links, anchors and bare names.)
func TestREADMEPaths(t *testing.T) {
	pathRE := regexp.MustCompile("`((?:\\.ci|api|bench|bridge|cmd|configs|connectors|deploy|docs|examples|internal|mapping|sandbox|scripts)/[^`\\s]*)`")
	seen := 0
	for page, text := range docPages(t) {
		for _, m := range pathRE.FindAllStringSubmatch(text, -1) {
			p := strings.TrimRight(m[1], ".,:;")
			if strings.ContainsAny(p, "<>*{}…") {
				continue // a pattern or a placeholder
			}
			seen++
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("%s names %s, which does not exist", page, p)
			}
		}
	}
	if seen < 60 {
		t.Fatalf("found %d paths in README.md and docs/; the extraction is broken", seen)
	}
}

// TestREADMEFirstConfig: the configuration the README shows a newcomer is the file
// configs/examples/first-real.yaml (which TestExampleConfigsLoad loads), less its comment
// header, and the one the script first_config.txtar runs the README's steps on.
func TestREADMEFirstConfig(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## A first real configuration\n")
	if !ok {
		t.Fatal("README.md: no section \"A first real configuration\"")
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README.md, A first real configuration: no ```yaml block")
	}
	f, err := os.ReadFile("../../configs/examples/first-real.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, line := range strings.SplitAfter(string(f), "\n") {
		if len(body) > 0 || !strings.HasPrefix(line, "#") {
			body = append(body, line)
		}
	}
	if want := strings.Join(body, ""); m[1] != want {
		t.Errorf("README.md's first configuration = \n%s\nwant configs/examples/first-real.yaml's\n%s", m[1], want)
	}
	// The script that runs it (testdata/script/first_config.txtar) carries the same file.
	ar, err := txtar.ParseFile("testdata/script/first_config.txtar")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, af := range ar.Files {
		if af.Name == "configs/examples/first-real.yaml" {
			found = true
			if string(af.Data) != string(f) {
				t.Errorf("first_config.txtar's configs/examples/first-real.yaml = \n%s\nwant the file's\n%s", af.Data, f)
			}
		}
	}
	if !found {
		t.Error("first_config.txtar has no configs/examples/first-real.yaml")
	}
}
