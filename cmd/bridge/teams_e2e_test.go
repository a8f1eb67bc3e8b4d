package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestTeamsNotificationAndSweep: `bridge run` subscribes to Graph's change notifications once
// its server listens (the Graph fake validates the URL); a recording notified becomes a
// transcript owned by the member bound to the organizer (external:teams:<object id>), a forged
// notification is refused; the sweep (bridge run --once, from the stored delta link) finds that
// recording again and one that was never notified, and only the latter is uploaded; a backfill
// finds both and queues nothing. Each recording reaches the sandbox exactly once.
func TestTeamsNotificationAndSweep(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	fake := teamstest.Start(t)
	org := fake.AddUser("", "Sam Lee", "sam.personal@elsewhere.test") // not Sam's member e-mail: the identity decides
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	if _, err := c.PutIdentity(context.Background(), sandboxtest.SamID, api.Identity{Provider: "teams", ExternalID: org.ID}); err != nil {
		t.Fatal(err)
	}
	mp4, err := os.ReadFile("../../sandbox/testdata/media/meeting.mp4")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "teams.secret"), []byte(teamstest.ClientSecret), 0o600)
	os.WriteFile(filepath.Join(dir, "teams.state"), []byte("client-state-of-this-bridge"), 0o600)
	addr := freeAddr(t)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
server: {addr: %q}
sources:
  - name: teams
    type: teams
    tenant_id: %s
    client_id: %s
    client_secret_file: %q
    organizers: [sam.personal@elsewhere.test]
    start_date: %s
    graph_url: %q
    login_url: %q
    notifications: {public_url: %q, client_state_file: %q}
    schedule: "@every 1h"
    mapping: {provider: teams, rules: [identity, email], otherwise: skip}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), addr, teamstest.TenantID, teamstest.ClientID,
		filepath.Join(dir, "teams.secret"), time.Now().AddDate(0, 0, -7).Format("2006-01-02"), fake.URL, fake.URL,
		"http://"+addr, filepath.Join(dir, "teams.state")), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, &bytes.Buffer{}, &errb) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("bridge run exited %d:\n%s", code, tail(errb.String(), 15))
		}
	}()
	// The subscription is made once the server listens, and the first scan (at start, before
	// any recording) is over: what comes next comes by notification.
	sub := waitUntil(t, "a subscription and the first scan", &errb, func() (teamstest.Subscription, bool) {
		subs := fake.Subscriptions()
		if len(subs) == 1 && fake.Count("delta") > 0 {
			return subs[0], true
		}
		return teamstest.Subscription{}, false
	})
	if sub.NotificationURL != "http://"+addr+"/hooks/teams/teams" {
		t.Errorf("subscription to %s, want the bridge's /hooks/teams/teams", sub.NotificationURL)
	}
	notified := fake.AddRecording(org.ID, time.Now().Add(-2*time.Hour), mp4)
	forged := teamstest.ChangeNotification(sub.ID, "not-the-client-state", sub.ExpirationDateTime, notified)
	if resp, err := http.Post(sub.NotificationURL, "application/json", bytes.NewReader(forged)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged notification = %v, %v; want 401", resp, err)
	}
	if codes := fake.Notify(notified); len(codes) != 1 || codes[0] != http.StatusAccepted {
		t.Fatalf("the notification answered %v, want 202", codes)
	}
	it := waitUntil(t, "a transcript of the notified recording", &errb, func() (api.ListItem, bool) {
		it, ok := completed(t, sb.URL)[teamsExternalID(notified.ID)]
		return it, ok
	})
	if it.Author.ID != sandboxtest.SamID || !strings.Contains(string(it.Metadata), `"teams_meeting_id":"`+notified.MeetingID+`"`) {
		t.Errorf("transcription author %+v, metadata %s; want Sam (bound to teams:%s) and the meeting id", it.Author, it.Metadata, org.ID)
	}
	cancel()
	<-done
	done <- 0

	swept := fake.AddRecording(org.ID, time.Now().Add(-time.Hour), mp4) // never notified
	runOnce(t, config)
	got := completed(t, sb.URL)
	if it, ok := got[teamsExternalID(swept.ID)]; !ok || it.Author.ID != sandboxtest.SamID {
		t.Errorf("after the sweep, the recording never notified = %+v (found %v), want a transcript owned by Sam", it, ok)
	}
	if n := uploads(t, sb); n != 2 {
		t.Errorf("%d uploads after the notification and the sweep, want 2 (the notified recording found again is the same job)", n)
	}
	if code, out, errs := cli("sources", "check", "teams", "--config", config); code != 0 || !strings.Contains(out, "recordings of sam.personal@elsewhere.test can be read") {
		t.Errorf("sources check = %d\n%s%s", code, out, errs)
	}
	code, out, errs := cli("sources", "backfill", "teams", "--from", time.Now().AddDate(0, 0, -7).Format("2006-01-02"), "--config", config)
	if code != 0 || !strings.Contains(out, "2 recording(s)") || !strings.Contains(out, ", 0 new") {
		t.Errorf("backfill = %d\n%s%s; want both recordings found again and nothing new", code, out, errs)
	}
	runOnce(t, config)
	if n := uploads(t, sb); n != 2 {
		t.Errorf("%d uploads after a backfill and another sweep, want still 2", n)
	}
	// The organizer's application access policy withdrawn: doctor names the PowerShell that
	// grants it (issue 29).
	fake.NoPolicy(org.ID)
	code, out, errs = cli("doctor", "--config", config)
	if code == 0 || !strings.Contains(out+errs, "Grant-CsApplicationAccessPolicy") {
		t.Errorf("doctor without the access policy = %d\n%s%s; want a failure naming Grant-CsApplicationAccessPolicy", code, out, errs)
	}
}

// teamsExternalID is the X-External-Id of a Teams recording whose id is too long to be one.
func teamsExternalID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "teams:" + hex.EncodeToString(sum[:])
}

// waitUntil polls f for up to a minute, failing with the bridge's log when it never holds.
func waitUntil[T any](t *testing.T, what string, log *bytes.Buffer, f func() (T, bool)) T {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if v, ok := f(); ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute:\n%s", what, tail(log.String(), 20))
		}
	}
}
