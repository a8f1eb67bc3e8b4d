package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// oldLogKeys are the attribute names the logs used before they were made consistent: a line
// carrying one would break following a recording by job_id.
var oldLogKeys = []string{"job", "id", "item", "transcription", "event"}

// TestFollowOneRecordingThroughTheLog: in the JSON log of `bridge run --once` over two
// recordings and a webhook endpoint, one recording is followed by its job_id alone: found, its
// upload (with the transcription_id it got), done, its events and their deliveries (with
// endpoint and delivery_id) are all lines of that job, and no line of the other recording or
// under an old key name is among them.
func TestFollowOneRecordingThroughTheLog(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer receiver.Close()
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	os.WriteFile(filepath.Join(inbox, "followed.wav"), wavBytes(3, 1), 0o644)
	os.WriteFile(filepath.Join(inbox, "other.wav"), wavBytes(3, 2), 0o644)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
webhooks:
  - {name: crm, url: %q, secret: %q, allow_private: true}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, author: "email:sam@acme.test"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), receiver.URL, testWebhookSecret, inbox), 0o644)
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"run", "--once", "--config", config, "--log-format", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("bridge run --once = exit %d, %q\n%s", code, out.String(), tail(errb.String(), 20))
	}
	lines := parseLogLines(t, errb.String(), "json")
	for _, l := range lines {
		for _, k := range oldLogKeys {
			if _, ok := l[k]; ok {
				t.Errorf("a line uses the old key %q: %v", k, l)
			}
		}
	}
	var jobID string
	for _, l := range lines {
		if l["msg"] == "found" && l["item_id"] == "followed.wav" {
			jobID = l["job_id"]
		}
	}
	if jobID == "" {
		t.Fatalf("no found line for followed.wav with a job_id:\n%s", tail(errb.String(), 30))
	}
	var mine []map[string]string
	for _, l := range lines {
		if l["job_id"] == jobID {
			mine = append(mine, l)
		}
	}
	find := func(what string, match func(map[string]string) bool) map[string]string {
		for _, l := range mine {
			if match(l) {
				return l
			}
		}
		t.Errorf("following job_id %s: no %s line among\n%v", jobID, what, mine)
		return nil
	}
	find("found", func(l map[string]string) bool { return l["msg"] == "found" && l["source"] == "inbox" })
	uploaded := find("uploaded", func(l map[string]string) bool {
		return l["msg"] == "job" && l["to"] == "queued" && l["reason"] == "uploaded"
	})
	find("done", func(l map[string]string) bool { return l["msg"] == "job" && l["to"] == "done" })
	find("transcription.completed event", func(l map[string]string) bool {
		return l["msg"] == "event" && l["type"] == "transcription.completed"
	})
	delivered := find("delivery", func(l map[string]string) bool {
		return l["msg"] == "delivery" && l["type"] == "transcription.completed" && l["outcome"] == "delivered"
	})
	if uploaded == nil || delivered == nil {
		return
	}
	tid := uploaded["transcription_id"]
	if tid == "" || delivered["transcription_id"] != tid || delivered["endpoint"] != "crm" || delivered["delivery_id"] == "" {
		t.Errorf("uploaded line %v and delivery line %v: want one transcription_id, endpoint crm and a delivery_id", uploaded, delivered)
	}
	for _, l := range lines {
		if l["transcription_id"] == tid && l["job_id"] != jobID {
			t.Errorf("a line of transcription %s without its job_id %s: %v", tid, jobID, l)
		}
		if l["item_id"] == "other.wav" && l["job_id"] == jobID {
			t.Errorf("the other recording's line carries the followed job_id: %v", l)
		}
	}
}
