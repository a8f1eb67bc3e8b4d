package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestOwnersMapToMembers: recordings of three external users (one folder each: one bound to
// Sam, one named by the owner's e-mail, one unknown) → two transcripts with the right authors
// and one held job, which completes after `identities apply` binds its user from the map.
func TestOwnersMapToMembers(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	if _, err := c.PutIdentity(context.Background(), sandboxtest.SamID, api.Identity{Provider: "sso", ExternalID: "u-bound"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, folder := range []string{"u-bound", "owner@acme.test", "u-stranger", "u-manual"} {
		os.MkdirAll(filepath.Join(dir, "inbox", folder), 0o755)
		os.WriteFile(filepath.Join(dir, "inbox", folder, fmt.Sprintf("call-%d.wav", i)), wavBytes(4, uint32(i+1)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("external user,member\nu-stranger,email:sam@acme.test\n"), 0o644)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - name: inbox
    type: localdir
    path: %q
    stable_for: 0s
    owner_from: folder
    mapping: {provider: sso, rules: [identity, email], map_file: %q, otherwise: hold}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), filepath.Join(dir, "inbox"), filepath.Join(dir, "users.csv")), 0o644)

	code, out, errs := cli("run", "--once", "--config", config)
	if code != 3 || !strings.Contains(out, "done 2") || !strings.Contains(out, "held 2") {
		t.Fatalf("first run = %d, %q; want exit 3 with 2 done and 2 held\n%s", code, out, tail(errs, 10))
	}
	authors := func() map[string]string {
		out := map[string]string{}
		for ext, it := range completed(t, sb.URL) {
			out[ext[strings.LastIndex(ext, ":")+1:strings.LastIndex(ext, "@")]] = it.Author.ID
		}
		return out
	}
	got := authors()
	if got["u-bound/call-0.wav"] != sandboxtest.SamID || got["owner@acme.test/call-1.wav"] != sandboxtest.OwnerID || len(got) != 2 {
		t.Errorf("authors = %v; want call-0 by Sam (identity), call-1 by the owner (e-mail), call-2 and call-3 held", got)
	}
	// One held job is released by hand.
	cfg, err := loadConfig(config, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := openStoreAt(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	held, _ := store.Jobs(context.Background(), bridge.JobFilter{States: []bridge.State{bridge.StateHeld}})
	store.Close()
	var manual string
	for _, j := range held {
		if strings.HasPrefix(j.ItemID, "u-manual/") {
			manual = j.ID
		}
	}
	if code, _, errs := cli("jobs", "release", manual, "--author", "sam", "--config", config); code != 2 || !strings.Contains(errs, `--author "sam"`) {
		t.Errorf("release with a bad author = %d, %s; want a usage error naming it", code, errs)
	}
	if code, out, errs := cli("jobs", "release", manual, "--author", "email:owner@acme.test", "--config", config); code != 0 || !strings.Contains(out, "released") {
		t.Errorf("release = %d\n%s%s", code, out, errs)
	}
	if code, _, errs := cli("jobs", "release", manual, "--author", "email:owner@acme.test", "--config", config); code != 1 || !strings.Contains(errs, "not held") {
		t.Errorf("releasing a job that is not held = %d, %s; want 1", code, errs)
	}
	if code, out, _ := cli("jobs", "list", "--state", "held", "--config", config); code != 0 || !strings.Contains(out, "unmapped: no member matches the owner localdir:u-stranger") {
		t.Errorf("jobs list --state held = %d\n%s", code, out)
	}

	code, out, errs = cli("identities", "plan", "--source", "inbox", "--config", config)
	if code != 0 || !strings.Contains(out, "sso:u-bound") || !regexpMatch(`sso:u-stranger +sam@acme.test +bind +by map`, out) {
		t.Errorf("identities plan = %d\n%s%s", code, out, errs)
	}
	code, out, errs = cli("identities", "apply", "--source", "inbox", "--config", config)
	if code != 0 || !regexpMatch(`sso:u-stranger +sam@acme.test +created`, out) {
		t.Errorf("identities apply = %d\n%s%s", code, out, errs)
	}
	code, out, errs = cli("run", "--once", "--config", config)
	if code != 0 || !strings.Contains(out, "done 4") {
		t.Fatalf("run after the binding = %d, %q; want all 4 done\n%s", code, out, tail(errs, 10))
	}
	if got := authors(); got["u-stranger/call-2.wav"] != sandboxtest.SamID || got["u-manual/call-3.wav"] != sandboxtest.OwnerID {
		t.Errorf("authors after apply = %v; want call-2 by Sam (bound by the map), call-3 by the owner (released by hand)", got)
	}
	if code, out, _ := cli("identities", "apply", "--source", "inbox", "--config", config); code != 0 || strings.Contains(out, "created") {
		t.Errorf("a second apply = %d\n%s; want nothing created", code, out)
	}

	// The binding moves to the owner: reassign shows, then makes, the change.
	ctx := context.Background()
	if err := c.DeleteIdentity(ctx, sandboxtest.SamID, "sso", "u-stranger"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutIdentity(ctx, sandboxtest.OwnerID, api.Identity{Provider: "sso", ExternalID: "u-stranger"}); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cli("identities", "reassign", "--source", "inbox", "--config", config)
	if code != 0 || !regexpMatch(`u-stranger/call-2.wav +email:owner@acme.test +email:sam@acme.test +would reassign`, out) ||
		!strings.Contains(out, "1 transcription(s) to reassign") {
		t.Errorf("reassign (dry run) = %d\n%s%s", code, out, errs)
	}
	if got := authors(); got["u-stranger/call-2.wav"] != sandboxtest.SamID {
		t.Errorf("a dry run changed the author: %v", got)
	}
	if code, out, errs = cli("identities", "reassign", "--source", "inbox", "--apply", "--config", config); code != 0 || !strings.Contains(out, "reassigned") {
		t.Errorf("reassign --apply = %d\n%s%s", code, out, errs)
	}
	if got := authors(); got["u-stranger/call-2.wav"] != sandboxtest.OwnerID || got["u-bound/call-0.wav"] != sandboxtest.SamID {
		t.Errorf("authors after reassign = %v; want call-2 by the owner, the others unchanged", got)
	}
}

// TestScheduledIdentitySyncReleasesHeldJobs: with mapping.sync, bridge run binds the held
// recording's user from the map on its own, and the job goes on at once.
func TestScheduledIdentitySyncReleasesHeldJobs(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "inbox", "u-late"), 0o755)
	os.WriteFile(filepath.Join(dir, "inbox", "u-late", "call.wav"), wavBytes(4, 9), 0o644)
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("u-late,email:sam@acme.test\n"), 0o644)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - name: inbox
    type: localdir
    path: %q
    stable_for: 0s
    schedule: "@every 1s"
    owner_from: folder
    mapping: {provider: sso, rules: [identity], map_file: %q, sync: "@every 2s"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), filepath.Join(dir, "inbox"), filepath.Join(dir, "users.csv")), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, &bytes.Buffer{}, &errb) }()
	for deadline := time.Now().Add(40 * time.Second); ; {
		got := completed(t, sb.URL)
		if len(got) == 1 {
			for _, it := range got {
				if it.Author.ID != sandboxtest.SamID {
					t.Errorf("author = %+v, want Sam (bound by the scheduled sync)", it.Author)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("the held recording never completed:\n%s", tail(errb.String(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("bridge run exited %d", code)
	}
	if !strings.Contains(errb.String(), "msg=\"identity sync\"") || !strings.Contains(errb.String(), "unmapped: no member matches") {
		t.Errorf("the log shows no hold then sync:\n%s", tail(errb.String(), 20))
	}
}
