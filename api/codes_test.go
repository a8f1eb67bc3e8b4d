package api_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestCodesThroughTheClient provokes the reference's error codes against the sandbox and checks
// that the client hands each one back by status and code.
func TestCodesThroughTheClient(t *testing.T) {
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	owner := newClient(t, sb, sandboxtest.OwnerKey)
	read := newClient(t, sb, sandboxtest.ReadKey)
	oauth := newClient(t, sb, sandboxtest.OAuthToken)
	good := upload(t, owner, "a.wav", wav(2, 1), api.UploadParams{})
	owner.Wait(ctx, good.UUID, api.WaitOptions{})
	bad := upload(t, owner, "bad.mp3", bytes.Repeat([]byte{0x55}, 3000), api.UploadParams{})
	owner.Wait(ctx, bad.UUID, api.WaitOptions{})
	locked := upload(t, owner, "l.wav", wav(2, 2), api.UploadParams{})
	resp, err := http.Post(sb.Root+sandbox.ControlPath+"/transcriptions/"+locked.UUID+"/lock", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	file := wav(2, 3)
	up := func(c *api.Client, name string, p api.UploadParams) error {
		p.Filename, p.Size, p.Body = name, int64(len(file)), bytes.NewReader(file)
		_, err := c.Upload(ctx, p)
		return err
	}
	discard := func(_ any, err error) error { return err }
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"bad key", discard(newClient(t, sb, "mk_live_nope").Workspace(ctx)), 401, "invalid_api_key"},
		{"plan", discard(newClient(t, sb, sandboxtest.FreeKey).Workspace(ctx)), 403, api.CodeAPIAccessDenied},
		{"upload scope", up(read, "a.wav", api.UploadParams{}), 403, api.CodeUploadScopeRequired},
		{"reports scope", discard(read.Prompts(ctx)), 403, api.CodeReportsScopeRequired},
		{"delete scope", read.Delete(ctx, good.UUID), 403, api.CodeDeleteScopeRequired},
		{"members scope", discard(read.Members(ctx)), 403, api.CodeMembersScopeRequired},
		{"oauth members", discard(oauth.Members(ctx)), 403, api.CodeAPIKeyRequired},
		{"oauth patch", discard(oauth.Assign(ctx, good.UUID, "")), 403, api.CodeAuthorRequiresAPIKey},
		{"locked", discard(owner.Get(ctx, locked.UUID)), 403, api.CodeTranscriptionLocked},
		{"not found", discard(owner.Get(ctx, "00000000-0000-4000-8000-000000000000")), 404, "not_found"},
		{"member", discard(owner.PutIdentity(ctx, "00000000-0000-4000-8000-000000000000", api.Identity{Provider: "x", ExternalID: "y"})), 404, api.CodeMemberNotFound},
		{"identity", owner.DeleteIdentity(ctx, sandboxtest.SamID, "x", "y"), 404, api.CodeIdentityNotFound},
		{"identity conflict", discard(owner.PutIdentity(ctx, sandboxtest.OwnerID, api.Identity{Provider: "zoom", ExternalID: "u-1"})), 409, api.CodeIdentityConflict},
		{"failed", discard(owner.RequestReports(ctx, bad.UUID, "summary")), 409, api.CodeTranscriptionFailed},
		{"format", up(owner, "notes.txt", api.UploadParams{}), 400, api.CodeUnsupportedFileFormat},
		{"language", up(owner, "a.wav", api.UploadParams{Language: "xx"}), 422, "unsupported_language"},
		{"slug", up(owner, "a.wav", api.UploadParams{Reports: []string{"nope"}}), 422, api.CodePromptNotFound},
		{"author", up(owner, "a.wav", api.UploadParams{Author: "user:00000000-0000-4000-8000-000000000000"}), 422, api.CodeAuthorNotMember},
		{"export format", discard(owner.Export(ctx, good.UUID, "pdf")), 422, "invalid_export_format"},
	}
	for _, tc := range tests {
		e := api.AsError(tc.err)
		if e == nil || e.Status != tc.status || e.Code != tc.code || !api.IsCode(tc.err, tc.code) {
			t.Errorf("%s: %v, want %d %s", tc.name, tc.err, tc.status, tc.code)
		}
	}
	// 402 once the balance is gone; the failed transcription keeps its error_code.
	req, _ := http.NewRequest("PUT", sb.Root+sandbox.ControlPath+"/workspaces/"+sandboxtest.WorkspaceID+"/balance", strings.NewReader(`{"available_minutes":0}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if err := up(owner, "a.wav", api.UploadParams{}); !api.IsCode(err, api.CodeInsufficientBalance) || !api.IsStatus(err, 402) {
		t.Errorf("upload without minutes = %v, want 402 insufficient_balance", err)
	}
	if tr, _ := owner.Get(ctx, bad.UUID); tr == nil || tr.ErrorCode == nil || *tr.ErrorCode != api.ErrorFileCorrupted {
		t.Errorf("failed record = %+v, want error_code FILE_CORRUPTED", tr)
	}
	// Refusals of the client's own checks carry the code the service would have used.
	if _, err := owner.ExportBulk(ctx, nil, ""); !api.IsCode(err, "invalid_ids") {
		t.Errorf("ExportBulk(nil) = %v, want invalid_ids", err)
	}
	if err := up(owner, "a.wav", api.UploadParams{ExternalID: "mk_live_leak"}); !api.IsCode(err, api.CodeExternalIDInvalid) || strings.Contains(err.Error(), "mk_live_leak") {
		t.Errorf("credential as external id = %v, want external_id_invalid without echoing it", err)
	}
}
