package connectors_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// probe is a connector Config for the tests.
type probe struct {
	// Path is text.
	Path string `koanf:"path"`
	// On is a boolean (default true).
	On bool `koanf:"on"`
	// N is a whole number.
	N int64 `koanf:"n"`
	// Every is a duration.
	Every time.Duration `koanf:"every"`
	// Files is a list (default x, y).
	Files []string `koanf:"files"`
	// Include are globs.
	Include connectors.Globs `koanf:"include"`
	// Clock is not an option.
	Clock func() time.Time
}

func (p *probe) SetDefaults() {
	p.On = true
	if len(p.Files) == 0 {
		p.Files = []string{"x", "y"}
	}
}

func (p *probe) Validate() error { return connectors.Required("path", p.Path) }

func TestDecode(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		opts map[string]any
		want probe  // the decoded Config, when no error is wanted
		err  string // the error wanted
		key  string // the key the *OptionError names
	}{
		{map[string]any{}, probe{On: true, Files: []string{"x", "y"}}, "", ""},
		{map[string]any{"colour": "red", "path": "p"}, probe{}, `unknown option "colour" (probe takes every, files, include, n, on, path)`, "colour"},
		{map[string]any{"Path": "p"}, probe{}, `unknown option "Path"`, "Path"},
		{map[string]any{"clock": "now"}, probe{}, `unknown option "clock"`, "clock"},
		{map[string]any{"n": "many"}, probe{}, `option n: "many" is not a whole number`, "n"},
		{map[string]any{"n": 1.5}, probe{}, `option n: "1.5" is not a whole number`, "n"},
		{map[string]any{"on": "maybe"}, probe{}, `option on: "maybe" is not true or false`, "on"},
		{map[string]any{"path": map[string]any{"a": 1}}, probe{}, "option path: want text, not keys", "path"},
		{map[string]any{"path": []any{"a", "b"}}, probe{}, "option path: want text, not a list", "path"},
		{map[string]any{"path": true}, probe{}, `option path: "true" is not text`, "path"},
		{map[string]any{"files": []any{"a", map[string]any{"b": 1}}}, probe{}, "option files: item 1: want text, not keys", "files"},
		{map[string]any{"every": "soon"}, probe{}, `option every: "soon" is not a duration (like 30s, 5m or 1h30m)`, "every"},
		{map[string]any{"every": 5}, probe{}, `option every: "5" is not a duration`, "every"},
		{map[string]any{"include": []any{"[bad"}}, probe{}, `option include: glob "[bad": syntax error in pattern`, "include"},
		{map[string]any{"include": "*.wav,[bad"}, probe{}, `option include: glob "[bad"`, "include"},
		// Weakly typed values, as the bridge's own settings take them.
		{map[string]any{"on": "no", "n": "42", "path": 5}, probe{On: false, N: 42, Path: "5", Files: []string{"x", "y"}}, "", ""},
		{map[string]any{"on": "YES", "n": 3.0, "path": day}, probe{On: true, N: 3, Path: "2026-01-01", Files: []string{"x", "y"}}, "", ""},
		{map[string]any{"on": "0", "every": "90s", "files": "a,b,c"}, probe{Every: 90 * time.Second, Files: []string{"a", "b", "c"}}, "", ""},
		{map[string]any{"on": 1, "every": 0, "files": "solo"}, probe{On: true, Files: []string{"solo"}}, "", ""},
		// Given values replace the defaults, even false, 0 or a shorter list; none keeps them.
		{map[string]any{"on": false, "files": []any{"a"}}, probe{Files: []string{"a"}}, "", ""},
		{map[string]any{"on": nil, "files": nil, "include": "*.wav,*.m4a"}, probe{On: true, Files: []string{"x", "y"}, Include: connectors.Globs{"*.wav", "*.m4a"}}, "", ""},
	} {
		var got probe
		got.SetDefaults()
		err := connectors.Decode(tc.opts, "probe", &got)
		if tc.err == "" {
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode(%v) = %+v, %v, want %+v", tc.opts, got, err, tc.want)
			}
			continue
		}
		var oe *connectors.OptionError
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &oe) || oe.Key != tc.key {
			t.Errorf("Decode(%v) = %v, want an *OptionError for %s saying %q", tc.opts, err, tc.key, tc.err)
		} else if oe.Unknown != strings.HasPrefix(tc.err, "unknown") {
			t.Errorf("Decode(%v).Unknown = %v, want %v", tc.opts, oe.Unknown, !oe.Unknown)
		}
	}
}

func TestDecodeNeedsAPointerToAStruct(t *testing.T) {
	for _, cfg := range []any{probe{}, (*probe)(nil), new(int), nil} {
		if err := connectors.Decode(map[string]any{"path": "p"}, "probe", cfg); err == nil || !strings.Contains(err.Error(), "not a pointer to a struct") {
			t.Errorf("Decode(%T) = %v, want an error saying it takes a pointer to a struct", cfg, err)
		}
	}
}

// TestRegister: a registered type's sources start from its defaults, take the options on top,
// are validated and only then built; Defaults shows the defaults.
func TestRegister(t *testing.T) {
	var built []probe
	connectors.Register("probe", func(name string, cfg probe) (connectors.Source, error) {
		built = append(built, cfg)
		return nil, fmt.Errorf("built %s", name)
	})
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"path": "p", "on": "no"}, "built inbox"},
		{map[string]any{"on": "no"}, "option path: required"},
		{map[string]any{"path": "p", "n": "x"}, "option n:"},
	} {
		if _, err := connectors.New("probe", "inbox", tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(probe, %v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if want := (probe{Path: "p", Files: []string{"x", "y"}}); len(built) != 1 || !reflect.DeepEqual(built[0], want) {
		t.Errorf("built %+v, want one %+v", built, want)
	}
	var req *connectors.OptionError
	if _, err := connectors.New("probe", "x", nil); !errors.As(err, &req) || !errors.Is(err, connectors.ErrRequired) {
		t.Errorf("New(probe, nil) = %v, want an *OptionError wrapping ErrRequired", err)
	}
	if d, ok := connectors.Defaults("probe"); !ok || !reflect.DeepEqual(d, probe{On: true, Files: []string{"x", "y"}}) {
		t.Errorf("Defaults(probe) = %+v, %v, want the defaults", d, ok)
	}
	if _, ok := connectors.Defaults("ftp"); ok {
		t.Errorf("Defaults(ftp) = _, true, want false")
	}
	if _, err := connectors.New("ftp", "x", nil); err == nil || !strings.Contains(err.Error(), `unknown source type "ftp" (known: [probe])`) {
		t.Errorf("New(ftp) = %v, want an error naming the known types", err)
	}
}
