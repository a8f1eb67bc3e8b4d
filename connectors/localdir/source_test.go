package localdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	dir   string
	clock *clock
	n     int
}

func (f *fixture) Put(t *testing.T, name string, data []byte) {
	p := filepath.Join(f.dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Distinct modification times even on coarse file systems.
	f.n++
	mt := time.Now().Add(time.Duration(f.n) * time.Second)
	os.Chtimes(p, mt, mt)
}

func (f *fixture) Remove(t *testing.T, name string) { os.Remove(filepath.Join(f.dir, name)) }

func (f *fixture) Settle(*testing.T) { f.clock.Advance(time.Hour) }

func newSource(t *testing.T, edit func(*Config)) (*Source, *fixture) {
	dir := t.TempDir()
	c := &clock{t: time.Now()}
	cfg := Config{Path: dir, Recursive: true, StableFor: 5 * time.Second, Now: c.Now}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, &fixture{dir: dir, clock: c}
}

func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		s, f := newSource(t, nil)
		return s, f
	})
}

func TestStableOnly(t *testing.T) {
	s, f := newSource(t, nil)
	p := filepath.Join(f.dir, "growing.wav")
	os.WriteFile(p, []byte("part"), 0o644)
	now := f.clock.Now()
	os.Chtimes(p, now, now)
	if recs, _, _ := s.List(context.Background(), ""); len(recs) != 0 {
		t.Fatalf("a file written just now was taken")
	}
	f.clock.Advance(3 * time.Second)
	os.WriteFile(p, []byte("part two"), 0o644) // still growing
	os.Chtimes(p, f.clock.Now(), f.clock.Now())
	f.clock.Advance(3 * time.Second)
	if recs, _, _ := s.List(context.Background(), ""); len(recs) != 0 {
		t.Fatalf("a file that changed 3 s ago was taken (stable_for 5 s)")
	}
	f.clock.Advance(3 * time.Second)
	recs, cursor, _ := s.List(context.Background(), "")
	if len(recs) != 1 || recs[0].Size != 8 || cursor == "" {
		t.Fatalf("after 6 s unchanged: %+v, cursor %q", recs, cursor)
	}
}

func TestFilters(t *testing.T) {
	s, f := newSource(t, func(c *Config) {
		c.Include = []string{"*.wav", "*.mp4"}
		c.Exclude = []string{"skip/*", "*draft*"}
	})
	for _, name := range []string{"a.wav", "b.txt", "sub/c.mp4", "skip/d.wav", "e-draft.wav", ".hidden.wav", "sub/.x/f.wav"} {
		f.Put(t, name, []byte("x"))
	}
	f.Settle(t)
	recs, _, _ := s.List(context.Background(), "")
	var got []string
	for _, r := range recs {
		got = append(got, r.ItemID)
	}
	if fmt.Sprint(got) != "[a.wav sub/c.mp4]" {
		t.Errorf("listed %v, want [a.wav sub/c.mp4]", got)
	}
	flat, f2 := newSource(t, func(c *Config) { c.Recursive = false })
	f2.Put(t, "top.wav", []byte("x"))
	f2.Put(t, "sub/deep.wav", []byte("x"))
	f2.Settle(t)
	if recs, _, _ := flat.List(context.Background(), ""); len(recs) != 1 || recs[0].ItemID != "top.wav" {
		t.Errorf("non-recursive listing = %+v", recs)
	}
}

func TestFinishMovesFiles(t *testing.T) {
	s, f := newSource(t, func(c *Config) { c.MoveFinished = true })
	f.Put(t, "a.wav", []byte("aaa"))
	f.Put(t, "sub/b.wav", []byte("bbb"))
	f.Settle(t)
	recs, _, _ := s.List(context.Background(), "")
	ctx := context.Background()
	if err := s.Finish(ctx, recs[0], connectors.OutcomeDone); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, recs[1], connectors.OutcomeSkipped); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"done/a.wav", "failed/sub/b.wav"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// done/ and failed/ are not scanned again.
	f.Settle(t)
	if recs, _, _ := s.List(ctx, ""); len(recs) != 0 {
		t.Errorf("finished files listed again: %+v", recs)
	}
	// Finishing twice is harmless.
	if err := s.Finish(ctx, recs0(recs), connectors.OutcomeDone); err != nil {
		t.Error(err)
	}
}

func recs0(r []connectors.Recording) connectors.Recording {
	if len(r) == 0 {
		return connectors.Recording{ItemID: "a.wav", Version: "x"}
	}
	return r[0]
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{}, "option path: required"},
		{map[string]any{"path": dir, "colour": "red"}, `unknown option "colour"`},
		{map[string]any{"path": dir, "stable_for": "soon"}, "option stable_for"},
		{map[string]any{"path": dir, "recursive": "maybe"}, "option recursive"},
		{map[string]any{"path": filepath.Join(dir, "missing")}, "no such file"},
		{map[string]any{"path": dir, "include": []any{"[bad"}}, "glob"},
	}
	for _, tc := range tests {
		_, err := connectors.New("localdir", "inbox", tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want an error naming %q", tc.opts, err, tc.want)
		}
	}
	src, err := connectors.New("localdir", "inbox", map[string]any{"path": dir, "recursive": false, "include": []any{"*.wav"}, "stable_for": "1s", "move_finished": true})
	if err != nil {
		t.Fatal(err)
	}
	if c := src.(*Source).cfg; c.Recursive || c.StableFor != time.Second || !c.MoveFinished || len(c.Include) != 1 {
		t.Errorf("parsed config = %+v", c)
	}
	if _, err := connectors.New("ftp", "x", nil); err == nil || !strings.Contains(err.Error(), `unknown source type "ftp"`) {
		t.Errorf("unknown type = %v", err)
	}
}
