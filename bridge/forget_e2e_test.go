package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// receiver is a webhook endpoint on loopback that checks each signature and keeps the bodies.
type receiver struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
	secret webhook.Secret
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.secret, _ = webhook.NewSecret()
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(r.Header, body, time.Now(), 0, rc.secret); err != nil {
			t.Errorf("bad signature: %v", err)
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, m)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// of returns the bodies of type typ received.
func (rc *receiver) of(typ string) []map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []map[string]any
	for _, b := range rc.bodies {
		if b["type"] == typ {
			out = append(out, b)
		}
	}
	return out
}

// TestForgetReachesUpstreamStoreAndReceivers: bridge forget --job deletes the transcription
// upstream (a read answers 404 after), ends the job deleted without its file name, removes its
// deliveries but the deletion's, keeps a tombstone that keeps a new version of the same file
// from being stored, and sends one signed transcription.deleted to the endpoint subscribed to it
// (not to the other). A second run has nothing to do; a dry run changes nothing; a key without
// the delete right is named.
func TestForgetReachesUpstreamStoreAndReceivers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	crm, erp := newReceiver(t), newReceiver(t)
	var eps []*relay.Endpoint
	for _, c := range []relay.EndpointConfig{
		{Name: "crm", URL: crm.srv.URL, Secrets: []webhook.Secret{crm.secret}, AllowPrivate: true, Events: []string{bridge.EventCompleted, bridge.EventDeleted}},
		{Name: "erp", URL: erp.srv.URL, Secrets: []webhook.Secret{erp.secret}, AllowPrivate: true, Events: []string{bridge.EventCompleted}},
	} {
		ep, err := relay.NewEndpoint(c)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rl := &relay.Relay{Store: e.store, Bus: sub, Poison: poison, Endpoints: eps, API: e.api}
	e.put(t, "a.wav", wav(8, 1))
	e.put(t, "b.wav", wav(8, 2))
	e.run(t)
	if err := rl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var a bridge.Job
	jobs, _ := e.store.Jobs(ctx, bridge.JobFilter{})
	for _, j := range jobs {
		if j.ItemID == "a.wav" {
			a = j
		}
	}
	if a.State != bridge.StateDone || len(crm.of(bridge.EventCompleted)) != 2 {
		t.Fatalf("before forget: job a %s, crm got %d completed; want done, 2", a.State, len(crm.of(bridge.EventCompleted)))
	}

	// A key without the right: named, and nothing changes.
	readOnly, err := api.New(api.Config{BaseURL: e.sb.URL, Key: sandboxtest.ReadKey, HTTPClient: sandboxtest.HTTPClient(t, nil), MaxAttempts: 1, DataPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bridge.Forget(ctx, e.store, readOnly, bridge.ForgetTarget{JobID: a.ID}, "test", false, time.Now())
	if !errors.Is(err, bridge.ErrDeleteRight) || !strings.Contains(err.Error(), "transcriptions:delete") {
		t.Errorf("Forget with a read-only key = %v; want ErrDeleteRight naming transcriptions:delete", err)
	}
	// A dry run lists and changes nothing.
	plan, err := bridge.Forget(ctx, e.store, e.api, bridge.ForgetTarget{JobID: a.ID}, "test", true, time.Now())
	if err != nil || len(plan) != 1 || len(plan[0].Actions) != 3 {
		t.Errorf("Forget dry run = %+v, %v; want 3 actions for one job", plan, err)
	}
	if _, err := e.api.Get(ctx, a.TranscriptionID); err != nil {
		t.Fatalf("after a dry run and a refused forget, Get(%s) = %v; want it still there", a.TranscriptionID, err)
	}

	out, err := bridge.Forget(ctx, e.store, e.api, bridge.ForgetTarget{OwnerEmail: "SAM@acme.test", ExternalID: ""}, "test", false, time.Now())
	if err != nil || len(out) != 2 {
		t.Fatalf("Forget --owner-email = %+v, %v; want both jobs (author email:sam@acme.test)", out, err)
	}
	if err := rl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Upstream: gone.
	if _, err := e.api.Get(ctx, a.TranscriptionID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Get(%s) after forget = %v; want 404", a.TranscriptionID, err)
	}
	// The store: deleted, scrubbed, only the deletion's deliveries, a tombstone.
	j, err := e.store.Job(ctx, a.ID)
	if err != nil || j.State != bridge.StateDeleted || j.Name != "" || j.Author != "" || !strings.HasPrefix(j.Reason, "forgotten: ") {
		t.Errorf("job a after forget = %+v, %v; want deleted, no name, no author, reason forgotten: …", j, err)
	}
	ds, _ := e.store.Deliveries(ctx, bridge.DeliveryFilter{})
	for _, d := range ds {
		if d.JobID == a.ID && d.Type != bridge.EventDeleted {
			t.Errorf("delivery %s (%s) of a forgotten job is kept", d.ID, d.Type)
		}
	}
	if gone, err := e.store.Tombstoned(ctx, bridge.TombstoneQuery{Source: "inbox", ItemID: "a.wav"}); err != nil || !gone {
		t.Errorf("Tombstoned(inbox a.wav) = %v, %v; want true", gone, err)
	}
	// The receivers: crm heard of both deletions, once each, signed; erp (not subscribed) none.
	deleted := crm.of(bridge.EventDeleted)
	if len(deleted) != 2 || len(erp.of(bridge.EventDeleted)) != 0 {
		t.Errorf("transcription.deleted: crm got %d, erp %d; want 2 and 0", len(deleted), len(erp.of(bridge.EventDeleted)))
	}
	found := false
	for _, b := range deleted {
		data := b["data"].(map[string]any)
		if data["transcription_id"] == a.TranscriptionID && data["cause"] == "forgotten" {
			found = true
		}
		if src, _ := data["source"].(map[string]any); src["file"] != nil {
			t.Errorf("transcription.deleted repeats the file name: %v", data)
		}
	}
	if !found {
		t.Errorf("no transcription.deleted for %s in %v", a.TranscriptionID, deleted)
	}
	// Again: nothing to do (the owner is no longer on any job), and by id: no action.
	if again, err := bridge.Forget(ctx, e.store, e.api, bridge.ForgetTarget{OwnerEmail: "sam@acme.test"}, "test", false, time.Now()); err != nil || len(again) != 0 {
		t.Errorf("Forget --owner-email again = %+v, %v; want nothing", again, err)
	}
	if again, err := bridge.Forget(ctx, e.store, e.api, bridge.ForgetTarget{JobID: a.ID}, "test", false, time.Now()); err != nil || len(again) != 1 || len(again[0].Actions) != 0 {
		t.Errorf("Forget --job again = %+v, %v; want no action", again, err)
	}
	// A later scan never stores the same file again, not even a new version of it.
	e.put(t, "a.wav", wav(9, 3))
	e.run(t)
	jobs, _ = e.store.Jobs(ctx, bridge.JobFilter{})
	if len(jobs) != 2 {
		t.Errorf("after a new version of a forgotten file: %d jobs, want the 2 forgotten only", len(jobs))
	}
}

// TestMappingSkipsAForgottenExternalID: a new recording whose mapped external id a tombstone
// holds (forgotten under another source item) is skipped, never uploaded.
func TestMappingSkipsAForgottenExternalID(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	e.put(t, "b.wav", wav(8, 1))
	if _, err := e.p.Scan(ctx, "inbox"); err != nil {
		t.Fatal(err)
	}
	jobs, _ := e.store.Jobs(ctx, bridge.JobFilter{})
	if len(jobs) != 1 {
		t.Fatalf("%d jobs after a scan, want 1", len(jobs))
	}
	ext := mapping.DefaultExternalID("localdir", "inbox", jobs[0].ItemID, jobs[0].Version)
	if jobs[0].SourceExternalID != "" {
		ext = jobs[0].SourceExternalID
	}
	if _, err := e.store.Forget(ctx, bridge.Tombstone{JobID: "elsewhere", Source: "other", ItemID: "z", ExternalID: ext, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	j, err := e.store.Job(ctx, jobs[0].ID)
	if err != nil || j.State != bridge.StateSkipped || !strings.HasPrefix(j.Reason, bridge.ReasonForgotten+":") {
		t.Errorf("job with a forgotten external id %q = %s %q, %v; want skipped, forgotten: …", ext, j.State, j.Reason, err)
	}
	if posts, _ := e.uploads(t); len(posts) != 0 {
		t.Errorf("%d uploads of a forgotten external id, want none", len(posts))
	}
}

type countingDeleter struct{ ids []string }

func (c *countingDeleter) Delete(_ context.Context, id string) error {
	c.ids = append(c.ids, id)
	return nil
}

// TestForgetWaitsForAnUploadInFlight: a job uploading under its lease is left for a later run
// (its transcription would escape), named in the error; the owner's other jobs are forgotten.
func TestForgetWaitsForAnUploadInFlight(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	now := time.Now().UTC()
	added, err := e.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "up.wav", Version: "1", Name: "up.wav"},
		{ItemID: "done.wav", Version: "1", Name: "done.wav"}}, "", now)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []bridge.State{bridge.StateUploading, bridge.StateDone} {
		j := added[i]
		j.State, j.Author, j.UpdatedAt, j.NextAt = st, "email:ada@acme.test", now, now.Add(time.Minute)
		if st == bridge.StateDone {
			j.TranscriptionID = "tr-done"
		}
		if err := e.store.Update(ctx, &j, bridge.StateDiscovered, "set up"); err != nil {
			t.Fatal(err)
		}
	}
	del := &countingDeleter{}
	out, err := bridge.Forget(ctx, e.store, del, bridge.ForgetTarget{OwnerEmail: "ada@acme.test"}, "test", false, now)
	if !errors.Is(err, bridge.ErrInFlight) || !strings.Contains(err.Error(), added[0].ID) || len(out) != 2 {
		t.Errorf("Forget with an upload in flight = %+v, %v; want ErrInFlight naming %s", out, err, added[0].ID)
	}
	if j, _ := e.store.Job(ctx, added[0].ID); j.State != bridge.StateUploading {
		t.Errorf("the uploading job is %s, want left uploading", j.State)
	}
	if j, _ := e.store.Job(ctx, added[1].ID); j.State != bridge.StateDeleted || len(del.ids) != 1 {
		t.Errorf("the other job is %s (deleted upstream: %v), want deleted", j.State, del.ids)
	}
	// Once the lease has run out (the uploader is gone), the job is forgotten.
	if _, err := bridge.Forget(ctx, e.store, del, bridge.ForgetTarget{OwnerEmail: "ada@acme.test"}, "test", false, now.Add(2*time.Minute)); err != nil {
		t.Errorf("Forget after the lease = %v", err)
	}
	if j, _ := e.store.Job(ctx, added[0].ID); j.State != bridge.StateDeleted {
		t.Errorf("the formerly uploading job is %s, want deleted", j.State)
	}
}

// TestForgetFindsAnInterruptedUpload: a job whose upload reached the service but whose process
// died before storing the id (uploading, its lease run out, no transcription id) has that
// transcription found by its bridge_job metadata and deleted by the forget.
func TestForgetFindsAnInterruptedUpload(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	now := time.Now().UTC()
	added, err := e.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "cut.wav", Version: "1", Name: "cut.wav"}}, "", now)
	if err != nil {
		t.Fatal(err)
	}
	j := added[0]
	data := wav(4, 9)
	res, err := e.api.Upload(ctx, api.UploadParams{Filename: "cut.wav", Size: int64(len(data)), Body: bytes.NewReader(data),
		Metadata: map[string]any{"bridge_job": j.ID}})
	if err != nil {
		t.Fatal(err)
	}
	j.State, j.Attempts, j.IdempotencyKey, j.UpdatedAt, j.NextAt = bridge.StateUploading, 1, "k-1", now, now.Add(-time.Second)
	if err := e.store.Update(ctx, &j, bridge.StateDiscovered, "uploading"); err != nil {
		t.Fatal(err)
	}
	out, err := bridge.Forget(ctx, e.store, e.api, bridge.ForgetTarget{JobID: j.ID}, "test", false, now)
	if err != nil || len(out) != 1 || !strings.Contains(strings.Join(out[0].Actions, "; "), "deleted transcription "+res.UUID+" upstream (found by its bridge_job metadata)") {
		t.Errorf("Forget = %+v, %v; want %s found and deleted", out, err, res.UUID)
	}
	if _, err := e.api.Get(ctx, res.UUID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Get(%s) after forget = %v; want 404", res.UUID, err)
	}
}
