package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestHoldBackfill: migration 6 gives every job held before it its typed hold reason, read from
// the beginning of its reason as the bridge matched it then; jobs in other states have none.
func TestHoldBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bridge.db")
	oldRunnerFile(t, path, 5, true)
	tests := []struct {
		state  bridge.State
		reason string
		want   bridge.HoldReason
	}{
		{bridge.StateHeld, "unmapped: no member matches the owner zoom:u1 <a@acme.test> (rules [identity])", bridge.HoldUnmapped},
		{bridge.StateHeld, "insufficient_balance: the workspace has no minutes left", bridge.HoldNoBalance},
		{bridge.StateHeld, "source_unavailable: source zoom: item m1: 503 (failing for 72h0m since …)", bridge.HoldSourceUnavailable},
		{bridge.StateHeld, "upload: 422 author_not_member: not a member of the workspace", bridge.HoldAuthorRefused},
		{bridge.StateHeld, "upload: 422 invalid_author: bad form", bridge.HoldAuthorRefused},
		{bridge.StateHeld, "upload: 403 upload_scope_required: the key lacks uploads:write", bridge.HoldUpstreamSetting},
		{bridge.StateHeld, "", bridge.HoldUpstreamSetting},
		{bridge.StateResubmit, "insufficient_balance: needs 3.00 minutes; uploaded again once they are available", ""},
		{bridge.StateSkipped, "unmapped: no member matches", ""},
	}
	db := rawDB(t, path)
	for i, tc := range tests {
		if _, err := db.Exec(`INSERT INTO jobs (id, source, item_id, version, recording, state, reason, created_at, updated_at)
			VALUES (?, 'inbox', ?, '1', '{}', ?, ?, 1, 2)`, fmt.Sprint("j", i), fmt.Sprint("item", i), tc.state, tc.reason); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, tc := range tests {
		j, err := s.Job(ctx, fmt.Sprint("j", i))
		if err != nil || j.Hold != tc.want || j.Reason != tc.reason {
			t.Errorf("job %s %q after migration 6 = %+v, %v; want hold %q, the reason kept", tc.state, tc.reason, j, err, tc.want)
		}
	}
}
