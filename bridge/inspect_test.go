package bridge_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/mapping"
)

// TestWhatBeforeWho (issue 31, point 6): a file the service cannot take (empty, under the
// minimum, random bytes named .wav, a WAV cut short) is skipped with one reason format before
// it is mapped, so it is never held unmapped for an author; a good file by an unknown owner is.
func TestWhatBeforeWho(t *testing.T) {
	e := newEnv(t, nil)
	src, err := localdir.New(localdir.Config{Path: e.inbox, Recursive: true, OwnerFrom: "folder"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.New("inbox", "localdir", "i", mapping.Rules{Provider: "sso", Resolve: []string{mapping.RuleIdentity}, Members: &mapping.Members{Dir: e.api}})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source, e.p.Sources["inbox"].Mapper = src, m
	random := make([]byte, 4000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	full := wav(8, 1)
	files := []struct {
		name   string
		data   []byte
		reason string // "" held unmapped
	}{
		{"u-x/good.wav", wav(3, 2), ""},
		{"u-x/empty.wav", nil, "file_too_small: 0 bytes, the service needs at least 1024"},
		{"u-x/short.mp3", random[:700], "file_too_small: 700 bytes, the service needs at least 1024"},
		{"u-x/random.wav", random, "unsupported_file_format: content of random.wav is not audio or video"},
		{"u-x/cut.wav", full[:len(full)/2], "file_truncated: 32022 bytes, its WAV header announces 64044"},
	}
	if err := os.MkdirAll(filepath.Join(e.inbox, "u-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		e.put(t, f.name, f.data)
	}
	if _, err := e.p.Scan(context.Background(), "inbox"); err != nil {
		t.Fatal(err)
	}
	if err := e.p.MapDiscovered(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bridge.Job{}
	for _, j := range jobs {
		got[j.ItemID] = j
	}
	for _, f := range files {
		j := got[f.name]
		switch {
		case f.reason == "" && !bridge.Unmapped(&j):
			t.Errorf("%s = %s %q, want held unmapped", f.name, j.State, j.Reason)
		case f.reason != "" && (j.State != bridge.StateSkipped || !hasPrefix(j.Reason, f.reason)):
			t.Errorf("%s = %s %q, want skipped %q", f.name, j.State, j.Reason, f.reason)
		}
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
