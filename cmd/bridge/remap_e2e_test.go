package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// lines keeps what a child process wrote, for the failure message.
type logLines struct {
	mu  sync.Mutex
	all []string
}

func (l *logLines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	l.mu.Unlock()
}

func (l *logLines) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all[max(0, len(l.all)-n):], "\n")
}

// TestHeldJobsMoveSoonAfterMappingChanges: a running `bridge run` (a child process) holds three
// recordings as unmapped. Each is let go by another process while it runs, and each is uploaded
// with the right author long before the one-minute remap and the five-minute member cache:
// `identities apply` binds the first owner (only the store tells the bridge), an edit of the
// map file maps the second, `jobs release` sets the third by hand.
func TestHeldJobsMoveSoonAfterMappingChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	t.Parallel()
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	ctx := context.Background()
	dir := t.TempDir()
	for i, p := range []string{"bound/u-apply", "bound/u-manual", "mapped/u-edit"} {
		os.MkdirAll(filepath.Join(dir, p), 0o755)
		os.WriteFile(filepath.Join(dir, p, "call.wav"), wavBytes(4, uint32(i+1)), 0o644)
	}
	users, team := filepath.Join(dir, "users.csv"), filepath.Join(dir, "team.csv")
	os.WriteFile(users, []byte("u-apply,email:sam@acme.test\n"), 0o644)
	os.WriteFile(team, []byte("external user,member\nu-other,email:owner@acme.test\n"), 0o644)
	db := filepath.Join(dir, "bridge.db")
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - {name: bound, type: localdir, path: %q, stable_for: 0s, owner_from: folder,
     mapping: {provider: sso, rules: [identity], map_file: %q}}
  - {name: mapped, type: localdir, path: %q, stable_for: 0s, owner_from: folder,
     mapping: {rules: [map], map_file: %q}}
`, sb.URL, sandboxtest.OwnerKey, db, filepath.Join(dir, "bound"), users, filepath.Join(dir, "mapped"), team), 0o644)
	store, err := sqlite.Open(ctx, db) // migrated before the bridge starts; this test's own handle
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	cmd, out := bridgeProcess(t, config, "", "run")
	var log logLines
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for out.Scan() {
			log.add(out.Text())
		}
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		<-drained
	}()

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
		return bridge.Job{}
	}
	// waitFor polls until ok holds for the item's job, with a bound far above the promised 15 s
	// and below the one-minute remap; false when it never did.
	waitFor := func(item string, ok func(*bridge.Job) bool) bool {
		t.Helper()
		for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if j := job(item); ok(&j) {
				return true
			}
		}
		return false
	}
	for _, item := range []string{"u-apply/call.wav", "u-manual/call.wav", "u-edit/call.wav"} {
		if !waitFor(item, bridge.Unmapped) {
			t.Fatalf("%s never held as unmapped: %+v\n%s", item, job(item), log.tail(20))
		}
	}
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	uploadedBy := func(item, author, member string) {
		t.Helper()
		if !waitFor(item, func(j *bridge.Job) bool { return j.TranscriptionID != "" }) {
			t.Errorf("%s not uploaded after the change: %+v\n%s", item, job(item), log.tail(20))
			return
		}
		j := job(item)
		tr, err := c.Get(ctx, j.TranscriptionID)
		if err != nil || j.Author != author || tr.Author.ID != member {
			t.Errorf("%s: author %q, upstream %+v, %v; want %q, member %s", item, j.Author, tr, err, author, member)
		}
	}

	// 1. identities apply, in this process: the bridge hears of it through the store only.
	if code, out, errs := cli("identities", "apply", "--source", "bound", "--config", config); code != 0 ||
		!regexpMatch(`sso:u-apply +sam@acme.test +created`, out) || !strings.Contains(out, "mapping change 1 noted") {
		t.Fatalf("identities apply = %d\n%s%s", code, out, errs)
	}
	uploadedBy("u-apply/call.wav", "external:sso:u-apply", sandboxtest.SamID)
	if !strings.Contains(log.tail(1000), `msg="mapping changed: held jobs are mapped again" generation=1 reason="identities apply --source bound: 1 created, 0 removed"`) {
		t.Errorf("the bridge's log does not say why the held jobs moved:\n%s", log.tail(20))
	}

	// 2. The map file is edited: no command at all.
	os.WriteFile(team, []byte("external user,member\nu-other,email:owner@acme.test\nu-edit,email:sam@acme.test\n"), 0o644)
	uploadedBy("u-edit/call.wav", "email:sam@acme.test", sandboxtest.SamID)
	if !strings.Contains(log.tail(1000), `msg="map file changed: held jobs are mapped again" source=mapped`) {
		t.Errorf("the bridge's log does not say the map file changed:\n%s", log.tail(20))
	}

	// 3. jobs release, in this process.
	if code, out, errs := cli("jobs", "release", job("u-manual/call.wav").ID, "--author", "email:owner@acme.test", "--config", config); code != 0 {
		t.Fatalf("jobs release = %d\n%s%s", code, out, errs)
	}
	uploadedBy("u-manual/call.wav", "email:owner@acme.test", sandboxtest.OwnerID)
}
