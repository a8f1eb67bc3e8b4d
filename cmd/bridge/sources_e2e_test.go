package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// cli runs the bridge in-process and returns its exit code and output.
func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// variant writes a copy of config with old replaced by new and returns its path.
func variant(t *testing.T, config, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(config)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("config %s lacks %q", config, old)
	}
	path := config + ".variant.yaml"
	os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
	return path
}

// runOnce runs `bridge run --once` in-process on config and fails the test on a non-zero exit.
func runOnce(t *testing.T, config string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"run", "--once", "--config", config}, &out, &errb); code != 0 {
		t.Fatalf("bridge run --once exited %d:\n%s", code, tail(errb.String(), 20))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// completed lists the sandbox's completed transcriptions by external id.
func completed(t *testing.T, base string) map[string]api.ListItem {
	t.Helper()
	c, err := api.New(api.Config{BaseURL: base, Key: sandboxtest.OwnerKey})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]api.ListItem{}
	for it, err := range c.All(context.Background(), api.ListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		if it.ExternalID != nil {
			out[*it.ExternalID] = it
		}
	}
	return out
}

// TestS3ToTranscripts: objects in a bucket (an in-process S3 server) → bridge run --once →
// transcripts with the connector's external ids and the objects' metadata; a second run
// uploads nothing; a key arriving late (sorting first) is picked up by the third.
func TestS3ToTranscripts(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	backend := s3mem.New()
	if err := backend.CreateBucket("recordings"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	put := func(key, team string, seed uint32) string {
		data := wavBytes(5, seed)
		if _, err := backend.PutObject("recordings", key, map[string]string{"X-Amz-Meta-Team": team, "X-Amz-Meta-Owner-Email": "sam@acme.test"},
			bytes.NewReader(data), int64(len(data)), nil); err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(data) // a single-part object's ETag
		return fmt.Sprintf("s3:recordings/%s@%s", key, hex.EncodeToString(sum[:]))
	}
	put("calls/m-1.wav", "sales", 1)
	put("calls/m-2.wav", "support", 2)
	put("other/ignored.wav", "sales", 3)

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s3.secret"), []byte("test-secret\n"), 0o600)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - name: bucket
    type: s3
    bucket: recordings
    prefix: calls/
    region: us-east-1
    endpoint: %q
    path_style: true
    access_key_id: test
    secret_access_key_file: %q
    include: ["*.wav"]
    owner_from: "meta:owner-email"
    author: "email:sam@acme.test"
    metadata: {team: "{{.Fields.team}}"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), srv.URL, filepath.Join(dir, "s3.secret")), 0o644)

	runOnce(t, config)
	got := completed(t, sb.URL)
	if len(got) != 2 {
		t.Fatalf("%d transcriptions after the first run, want 2: %v", len(got), got)
	}
	for id, it := range got {
		var meta map[string]string
		json.Unmarshal(it.Metadata, &meta)
		if !strings.HasPrefix(id, "s3:recordings/calls/m-") || meta["team"] == "" || meta["bridge_job"] == "" {
			t.Errorf("transcription %s: external id %q, metadata %v; want s3:recordings/calls/… and team from x-amz-meta-team", it.ID, id, meta)
		}
	}
	before := uploads(t, sb)
	if before < 2 {
		t.Fatalf("the journal shows %d uploads after the first run, want at least 2", before)
	}
	runOnce(t, config)
	if n := uploads(t, sb); n != before {
		t.Errorf("a second run sent %d uploads, want none", n-before)
	}

	late := put("calls/a-late.wav", "sales", 4)
	runOnce(t, config)
	if got := completed(t, sb.URL); len(got) != 3 || got[late].ID == "" {
		t.Errorf("after a late key: %d transcriptions, %q missing", len(got), late)
	}

	if code, out, errs := cli("sources", "check", "bucket", "--config", config); code != 0 || !strings.Contains(out, "ok: bucket recordings reachable") {
		t.Errorf("sources check = %d\n%s%s", code, out, errs)
	}
	if code, out, _ := cli("sources", "list", "bucket", "--limit", "1", "--config", config); code != 0 ||
		!strings.Contains(out, "3 recording(s)") || !strings.Contains(out, "s3:recordings/calls/") || strings.Count(out, "calls/") != 2 {
		t.Errorf("sources list --limit 1 = %d\n%s", code, out)
	}
	if code, _, errs := cli("sources", "check", "bucket", "--config", variant(t, config, "bucket: recordings", "bucket: nope")); code != 1 || !strings.Contains(errs, "bucket nope: not reachable") {
		t.Errorf("sources check of a missing bucket = %d, %s; want 1 naming the bucket", code, errs)
	}
}

// uploads counts the upload requests the sandbox has seen.
func uploads(t *testing.T, sb *sandboxtest.Sandbox) int {
	n := 0
	for _, e := range sb.Journal(t) {
		if e.Method == "POST" && strings.HasSuffix(e.Path, "/transcriptions") {
			n++
		}
	}
	return n
}

// TestDriveToTranscripts: files in a Drive folder (the Drive fake, through the real client
// library, as a service account impersonating the owner) → bridge run --once → transcripts
// with gdrive:<id> external ids and the owner in the metadata; a second run uploads nothing; a
// file moved into the folder later is picked up from the changes feed.
func TestDriveToTranscripts(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	fake := gdrivetest.Start(t)
	const owner = "sam@acme.test"
	folder := fake.Folder("Calls", gdrivetest.Root(owner), owner, "")
	a := fake.Put("Weekly sync", "audio/wav", folder, owner, "", wavBytes(5, 1))
	b := fake.Put("b.wav", "audio/wav", folder, owner, "", wavBytes(5, 2))
	elsewhere := fake.Put("c.wav", "audio/wav", gdrivetest.Root(owner), owner, "", wavBytes(5, 3))

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sa.json"), fake.ServiceAccountJSON(), 0o600)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources:
  - name: drive
    type: gdrive
    credentials_file: %q
    subject: %s
    folder_id: %s
    endpoint: %q
    author: "email:sam@acme.test"
    metadata: {owner: "{{.Fields.owner_email}}"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), filepath.Join(dir, "sa.json"), owner, folder, fake.URL), 0o644)

	runOnce(t, config)
	got := completed(t, sb.URL)
	for _, id := range []string{a, b} {
		it, ok := got["gdrive:"+id]
		var meta map[string]string
		json.Unmarshal(it.Metadata, &meta)
		if !ok || meta["owner"] != owner {
			t.Errorf("gdrive:%s: found %v, metadata %v; want a transcript with owner %s", id, ok, meta, owner)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d transcriptions after the first run, want 2", len(got))
	}
	before := uploads(t, sb)
	runOnce(t, config)
	if n := uploads(t, sb); n != before {
		t.Errorf("a second run sent %d uploads, want none", n-before)
	}
	fake.Move(elsewhere, folder)
	runOnce(t, config)
	if _, ok := completed(t, sb.URL)["gdrive:"+elsewhere]; !ok {
		t.Errorf("a file moved into the folder later was not uploaded")
	}

	if code, out, errs := cli("sources", "check", "drive", "--config", config); code != 0 ||
		!strings.Contains(out, "ok: signed in as "+owner) || !strings.Contains(out, `ok: folder "Calls"`) {
		t.Errorf("sources check = %d\n%s%s", code, out, errs)
	}
	if code, out, _ := cli("sources", "list", "drive", "--config", config); code != 0 || !strings.Contains(out, "Weekly sync.wav") ||
		!strings.Contains(out, "gdrive:"+a) || !strings.Contains(out, "3 recording(s)") {
		t.Errorf("sources list = %d\n%s", code, out)
	}
	if code, _, errs := cli("sources", "check", "drive", "--config", variant(t, config, "folder_id: "+folder, "folder_id: nope")); code != 1 || !strings.Contains(errs, "folder nope: not visible") {
		t.Errorf("sources check of a missing folder = %d, %s; want 1 naming the folder", code, errs)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
