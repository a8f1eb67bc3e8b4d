package archtest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOneMajorVersionPerModule fails when go.mod requires directly two major versions of one
// module (say watermill-sql v3 and v4, issue 32 point 7): two copies of one library's types and
// behaviour in one binary, which the code then has to keep apart. There is no allow-list.
func TestOneMajorVersionPerModule(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, dup := range majorDuplicates(directRequires(string(gomod))) {
		t.Errorf("go.mod requires several major versions of %s: %s", dup[0], strings.Join(dup[1:], ", "))
	}
}

// TestMajorDuplicatesNamesThem: the rule sees /vN and gopkg.in's .vN suffixes, and only those.
func TestMajorDuplicatesNamesThem(t *testing.T) {
	for _, c := range []struct {
		gomod string
		want  []string
	}{
		{"require (\n\tgithub.com/a/sql/v3 v3.1.0\n\tgithub.com/a/sql/v4 v4.1.2\n)\n", []string{"github.com/a/sql", "github.com/a/sql/v3", "github.com/a/sql/v4"}},
		{"require github.com/a/b v1.0.0\nrequire github.com/a/b/v2 v2.0.0\n", []string{"github.com/a/b", "github.com/a/b", "github.com/a/b/v2"}},
		{"require (\n\tgopkg.in/yaml.v2 v2.4.0\n\tgopkg.in/yaml.v3 v3.0.1\n)\n", []string{"gopkg.in/yaml", "gopkg.in/yaml.v2", "gopkg.in/yaml.v3"}},
		{"require (\n\tgithub.com/a/sql/v4 v4.1.2\n\tgithub.com/a/sql/v3 v3.1.0 // indirect\n)\n", nil},
		{"require (\n\tgithub.com/a/sqlv3 v1.0.0\n\tgithub.com/a/sql v1.0.0\n)\n", nil},
	} {
		got := majorDuplicates(directRequires(c.gomod))
		var flat []string
		for _, d := range got {
			flat = append(flat, d...)
		}
		if !slices.Equal(flat, c.want) {
			t.Errorf("majorDuplicates(%q) = %q, want %q", c.gomod, flat, c.want)
		}
	}
}

// directRequires returns the module paths go.mod requires without "// indirect".
func directRequires(gomod string) []string {
	var out []string
	block := false
	for _, line := range strings.Split(gomod, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "require ") && !strings.HasSuffix(line, "("):
			line = strings.TrimPrefix(line, "require ")
		case !block:
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && !strings.Contains(line, "// indirect") {
			out = append(out, f[0])
		}
	}
	return out
}

// majorSuffix is a major version at the end of a module path: /vN, or .vN on gopkg.in.
var majorSuffix = regexp.MustCompile(`(/v[2-9][0-9]*|^gopkg\.in/.*(\.v[0-9]+))$`)

// majorDuplicates groups paths by module without the major suffix and returns, for each module
// with more than one, its name followed by the paths, sorted.
func majorDuplicates(paths []string) [][]string {
	byBase := map[string][]string{}
	for _, p := range paths {
		base := p
		if m := majorSuffix.FindStringSubmatch(p); m != nil {
			suffix := m[1]
			if m[2] != "" {
				suffix = m[2]
			}
			base = strings.TrimSuffix(p, suffix)
		}
		byBase[base] = append(byBase[base], p)
	}
	var out [][]string
	for base, ps := range byBase {
		if len(ps) > 1 {
			slices.Sort(ps)
			out = append(out, append([]string{base}, ps...))
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}
