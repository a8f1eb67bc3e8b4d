package status

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// fakeDeleter records the transcriptions deleted.
type fakeDeleter struct {
	mu      sync.Mutex
	deleted []string
}

func (f *fakeDeleter) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	return nil
}

// TestForgetAction: a job's page links to Forget…, whose page lists what a forget would do
// without doing it; the form's POST (with the session's CSRF token and the confirmation)
// forgets the job as bridge forget does and writes the audit log; a POST without the
// confirmation is refused and changes nothing.
func TestForgetAction(t *testing.T) {
	del := &fakeDeleter{}
	rg := newRig(t, func(o *Options) { o.Deleter = del })
	ctx := context.Background()
	j := rg.heldJob(t, "call.wav")
	j.TranscriptionID = "tr-1"
	if err := rg.store.Update(ctx, &j, bridge.StateHeld, ""); err != nil {
		t.Fatal(err)
	}
	c := rg.client
	csrf := rg.login(t, c)
	if _, page := rg.get(t, c, "/jobs/"+j.ID); !strings.Contains(page, `href="/jobs/`+j.ID+`/forget"`) {
		t.Errorf("the job's page has no Forget… link")
	}
	code, page := rg.get(t, c, "/jobs/"+j.ID+"/forget")
	if code != http.StatusOK {
		t.Fatalf("GET /jobs/%s/forget = %d", j.ID, code)
	}
	contains(t, "the forget page", page, "delete transcription tr-1 upstream", "keep a tombstone", `name="confirm" value="forget"`)
	if len(del.deleted) != 0 {
		t.Fatalf("the confirmation page deleted %v", del.deleted)
	}
	if res, _ := rg.post(t, c, "/jobs/"+j.ID+"/forget", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("POST forget without the confirmation = %d, want 400", res.StatusCode)
	}
	if got, _ := rg.store.Job(ctx, j.ID); got.State != bridge.StateHeld || len(del.deleted) != 0 {
		t.Fatalf("after a refused POST: job %s, deleted %v; want held, none", got.State, del.deleted)
	}
	res, _ := rg.post(t, c, "/jobs/"+j.ID+"/forget", url.Values{"csrf": {csrf}, "confirm": {"forget"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST forget = %d, want 303", res.StatusCode)
	}
	got, err := rg.store.Job(ctx, j.ID)
	if err != nil || got.State != bridge.StateDeleted || got.Name != "" || len(del.deleted) != 1 || del.deleted[0] != "tr-1" {
		t.Errorf("after forget: job %+v, %v, deleted %v; want deleted, no name, tr-1 deleted upstream", got, err, del.deleted)
	}
	log, err := rg.store.AuditLog(ctx, 10)
	if err != nil || len(log) == 0 || log[0].Action != "forget" || log[0].Targets[0] != j.ID || log[0].Error != "" {
		t.Errorf("audit log = %+v, %v; want the forget of %s first", log, err, j.ID)
	}
	_, flash := rg.get(t, c, "/jobs/"+j.ID)
	contains(t, "the job's page after forget", flash, "forgotten", "deleted")
}
