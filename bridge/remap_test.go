package bridge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestHeldJobsMapAgainAfterAChangeElsewhere: two recordings are held as unmapped; a binding
// made upstream and noted in the store through another handle (as identities apply in another
// process does), and an edit of the map file, each let one go at the next CheckMapping and
// step. The clock stands still, so neither the one-minute remap nor the member cache's TTL can
// be what moved them; without a change, CheckMapping leaves the held jobs alone.
func TestHeldJobsMapAgainAfterAChangeElsewhere(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, HTTPClient: sandboxtest.HTTPClient(t, nil), DataPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(dir, "inbox")
	for i, owner := range []string{"u-late", "u-csv"} {
		os.MkdirAll(filepath.Join(inbox, owner), 0o755)
		os.WriteFile(filepath.Join(inbox, owner, "call.wav"), wav(3, uint64(i+1)), 0o644)
	}
	team := filepath.Join(dir, "team.csv")
	os.WriteFile(team, []byte("u-other,email:owner@acme.test\n"), 0o644)
	src, err := localdir.New(localdir.Config{Path: inbox, Recursive: true, OwnerFrom: "folder"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.New("inbox", "localdir", "i", mapping.Rules{Provider: "sso", Resolve: []string{mapping.RuleIdentity, mapping.RuleMap},
		MapFile: team, Members: &mapping.Members{Dir: client}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	p := &bridge.Pipeline{Store: store, API: client, Instance: "i", Now: func() time.Time { return now },
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m}}}
	job := func(item string) bridge.Job {
		t.Helper()
		jobs, err := store.Jobs(ctx, bridge.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.ItemID == item {
				return j
			}
		}
		t.Fatalf("no job for %s", item)
		return bridge.Job{}
	}
	step := func() {
		t.Helper()
		var wg sync.WaitGroup
		if err := p.Step(ctx, &wg, false); err != nil {
			t.Fatalf("Step: %v", err)
		}
		wg.Wait()
	}
	if err := p.CheckMapping(ctx); err != nil { // at start: notes the generation
		t.Fatal(err)
	}
	if _, err := p.Scan(ctx, "inbox"); err != nil {
		t.Fatal(err)
	}
	step()
	for _, item := range []string{"u-late/call.wav", "u-csv/call.wav"} {
		if j := job(item); !bridge.Unmapped(&j) || strings.HasPrefix(j.Reason, "unmapped: unmapped") {
			t.Fatalf("%s = %s %q, want held as unmapped (the prefix once)", item, j.State, j.Reason)
		}
	}

	other, err := sqlite.Open(ctx, db) // another process's handle
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tests := []struct {
		name   string
		change func(t *testing.T)
		item   string
		want   string // the author it is uploaded with; "" still held
	}{
		{"nothing changed", func(*testing.T) {}, "u-late/call.wav", ""},
		{"bound upstream, noted by another handle", func(t *testing.T) {
			if _, err := client.PutIdentity(ctx, sandboxtest.SamID, api.Identity{Provider: "sso", ExternalID: "u-late"}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.NoteMappingChange(ctx, "identities apply --source inbox: 1 created", now); err != nil {
				t.Fatal(err)
			}
		}, "u-late/call.wav", "external:sso:u-late"},
		{"map file edited", func(*testing.T) {
			os.WriteFile(team, []byte("u-other,email:owner@acme.test\nu-csv,email:sam@acme.test\n"), 0o644)
		}, "u-csv/call.wav", "email:sam@acme.test"},
	}
	for _, tc := range tests {
		before := job(tc.item)
		tc.change(t)
		if err := p.CheckMapping(ctx); err != nil {
			t.Errorf("%s: CheckMapping = %v", tc.name, err)
		}
		step()
		j := job(tc.item)
		switch {
		case tc.want == "" && (j.State != bridge.StateHeld || !j.NextAt.Equal(before.NextAt)):
			t.Errorf("%s: %s = %s, due %v; want still held, due %v", tc.name, tc.item, j.State, j.NextAt, before.NextAt)
		case tc.want != "" && (j.TranscriptionID == "" || j.Author != tc.want):
			t.Errorf("%s: %s = %s %q, author %q; want uploaded with author %q", tc.name, tc.item, j.State, j.Reason, j.Author, tc.want)
		}
	}
}
