package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// newClient returns a client of sb with fast backoffs and polling, whose traffic is checked
// against the OpenAPI description.
func newClient(t testing.TB, sb *sandboxtest.Sandbox, key string, edit ...func(*api.Config)) *api.Client {
	t.Helper()
	cfg := api.Config{
		BaseURL: sb.URL, Key: key, HTTPClient: sandboxtest.HTTPClient(t, nil),
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		PollMin: 5 * time.Millisecond, PollMax: 10 * time.Millisecond,
	}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wav is a valid 8 kHz WAV of seconds, its samples drawn from seed.
func wav(seconds float64, seed uint64) []byte { return mediatest.WAV(seconds, 0, seed) }

func upload(t *testing.T, c *api.Client, name string, file []byte, p api.UploadParams) *api.UploadResult {
	t.Helper()
	p.Filename, p.Size, p.Body = name, int64(len(file)), bytes.NewReader(file)
	res, err := c.Upload(context.Background(), p)
	if err != nil {
		t.Fatalf("Upload(%s) = %v", name, err)
	}
	return res
}

func TestEveryEndpoint(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := newClient(t, sb, sandboxtest.OwnerKey)
	ctx := context.Background()

	ws, err := c.Workspace(ctx)
	if err != nil || ws.Workspace.ID != sandboxtest.WorkspaceID || ws.Balance.AvailableMinutes != 600 || ws.Limits.Concurrency != 4 {
		t.Fatalf("Workspace() = %+v, %v", ws, err)
	}
	if missing, err := c.MissingScopes(ctx, "read", "uploads:write"); err != nil || len(missing) != 0 {
		t.Errorf("MissingScopes(owner) = %v, %v", missing, err)
	}
	if missing, _ := newClient(t, sb, sandboxtest.ReadKey).MissingScopes(ctx, "read", "uploads:write", "reports:write"); strings.Join(missing, ",") != "uploads:write,reports:write" {
		t.Errorf("MissingScopes(read-only) = %v", missing)
	}
	members, err := c.Members(ctx)
	if err != nil || len(members) != 2 {
		t.Fatalf("Members() = %v, %v", members, err)
	}
	created, err := c.PutIdentity(ctx, sandboxtest.SamID, api.Identity{Provider: "gdrive", ExternalID: "sam/drive:1"})
	if err != nil || !created {
		t.Errorf("PutIdentity = %v, %v; want created", created, err)
	}
	if created, err := c.PutIdentity(ctx, sandboxtest.SamID, api.Identity{Provider: "gdrive", ExternalID: "sam/drive:1"}); err != nil || created {
		t.Errorf("PutIdentity again = %v, %v; want existing", created, err)
	}
	if _, err := c.PutIdentity(ctx, sandboxtest.OwnerID, api.Identity{Provider: "gdrive", ExternalID: "sam/drive:1"}); !api.IsCode(err, "identity_conflict") {
		t.Errorf("PutIdentity on another member = %v, want identity_conflict", err)
	}
	projects, err := c.Projects(ctx)
	if err != nil || len(projects) != 1 || projects[0].ID != sandboxtest.SalesID {
		t.Errorf("Projects() = %v, %v", projects, err)
	}
	prompts, err := c.Prompts(ctx)
	if err != nil || len(prompts) < 5 {
		t.Errorf("Prompts() = %d templates, %v", len(prompts), err)
	}

	noDiarize := false
	res := upload(t, c, "Kunden Gespräch.wav", wav(20, 1), api.UploadParams{
		ExternalID: "crm-7", Metadata: map[string]any{"deal": "D-7", "stage": map[string]any{"n": 2}},
		Author: "external:gdrive:sam/drive:1", Language: "de", ProjectID: sandboxtest.SalesID,
		Diarize: &noDiarize, AIMetadata: true, Reports: []string{"summary", "deal-notes"},
	})
	if res.Status != "queued" || len(res.Reports) != 2 || res.Replayed || res.IdempotencyKey == "" {
		t.Errorf("Upload = %+v", res)
	}
	tr, err := c.Wait(ctx, res.UUID, api.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != "completed" || tr.Author.ID != sandboxtest.SamID || tr.Project == nil || *tr.Language != "de" ||
		*tr.ExternalID != "crm-7" || len(tr.PromptResults) != 2 || tr.PromptResults[0].Status != "completed" || len(tr.Speakers) != 0 {
		t.Errorf("Wait = %+v", tr)
	}
	var meta map[string]any
	json.Unmarshal(tr.Metadata, &meta)
	if meta["deal"] != "D-7" {
		t.Errorf("metadata = %s", tr.Metadata)
	}
	page, err := c.List(ctx, api.ListParams{ExternalID: "crm-7", MetadataKey: "deal", MetadataValue: "D-7", ProjectID: sandboxtest.SalesID,
		Language: "de", DateFrom: time.Now().Add(-24 * time.Hour), DateTo: time.Now().Add(24 * time.Hour), Sort: "-duration", Limit: 5})
	if err != nil || page.Total != 1 || page.Items[0].ID != res.UUID || page.Limit != 5 {
		t.Errorf("List = %+v, %v", page, err)
	}
	if t2, err := c.Assign(ctx, res.UUID, "email:owner@acme.test"); err != nil || t2.Author.ID != sandboxtest.OwnerID {
		t.Errorf("Assign = %v, %v", t2, err)
	}
	if t2, err := c.Assign(ctx, res.UUID, ""); err != nil || t2.Author.ID != sandboxtest.OwnerID {
		t.Errorf("Assign(clear) = %v, %v; want the key's creator", t2, err)
	}
	refs, err := c.RequestReports(ctx, res.UUID, "summary", "action-items")
	if err != nil || len(refs) != 2 || refs[0].ID != res.Reports[0].ID {
		t.Errorf("RequestReports = %+v, %v", refs, err)
	}
	if tr, err = c.Wait(ctx, res.UUID, api.WaitOptions{Reports: []string{"action-items"}}); err != nil || !api.Done(tr, []string{"action-items"}) {
		t.Errorf("Wait for action-items = %v", err)
	}
	for _, f := range []string{"md", "txt", "json"} {
		d, err := c.Export(ctx, res.UUID, f)
		if err != nil {
			t.Fatalf("Export(%s) = %v", f, err)
		}
		b, _ := io.ReadAll(d.Body)
		d.Body.Close()
		if d.Filename != titleOf(tr)+"."+f || len(b) == 0 {
			t.Errorf("Export(%s) = %q, %d bytes", f, d.Filename, len(b))
		}
	}
	second := upload(t, c, "b.wav", wav(3, 2), api.UploadParams{})
	c.Wait(ctx, second.UUID, api.WaitOptions{})
	d, err := c.ExportBulk(ctx, []string{res.UUID, second.UUID, "00000000-0000-4000-8000-000000000000"}, "txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(d.Body)
	d.Body.Close()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(zr.File) != 2 || d.Filename != "transcriptions.zip" {
		t.Errorf("ExportBulk = %s, %v", d.Filename, err)
	}
	var all []string
	for it, err := range c.All(ctx, api.ListParams{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, it.ID)
	}
	if len(all) != 2 {
		t.Errorf("All() = %d items, want 2", len(all))
	}
	if err := c.DeleteIdentity(ctx, sandboxtest.SamID, "gdrive", "sam/drive:1"); err != nil {
		t.Errorf("DeleteIdentity = %v", err)
	}
	if err := c.DeleteIdentity(ctx, sandboxtest.SamID, "gdrive", "sam/drive:1"); !api.IsCode(err, "identity_not_found") {
		t.Errorf("DeleteIdentity again = %v, want identity_not_found", err)
	}
	if err := c.Delete(ctx, second.UUID); err != nil {
		t.Errorf("Delete = %v", err)
	}
	if _, err := c.Get(ctx, second.UUID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := c.Delete(ctx, second.UUID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
}

func TestErrorCodes(t *testing.T) {
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := newClient(t, sb, sandboxtest.OwnerKey)
	read := newClient(t, sb, sandboxtest.ReadKey)
	file := wav(2, 1)
	up := func(c *api.Client, p api.UploadParams) error {
		p.Filename, p.Size, p.Body = "a.wav", int64(len(file)), bytes.NewReader(file)
		_, err := c.Upload(ctx, p)
		return err
	}
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"scope", up(read, api.UploadParams{}), 403, "upload_scope_required"},
		{"author", up(c, api.UploadParams{Author: "email:nobody@acme.test"}), 422, "author_not_member"},
		{"slug", up(c, api.UploadParams{Reports: []string{"nope"}}), 422, "prompt_not_found"},
		{"language", up(c, api.UploadParams{Language: "xx"}), 422, "unsupported_language"},
		{"bad key", func() error { _, err := newClient(t, sb, "mk_live_wrong").Workspace(ctx); return err }(), 401, "invalid_api_key"},
		{"members", func() error { _, err := read.Members(ctx); return err }(), 403, "members_scope_required"},
	}
	for _, tc := range tests {
		e := api.AsError(tc.err)
		if e == nil || e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%s: error = %v, want %d %s", tc.name, tc.err, tc.status, tc.code)
		}
		if !errors.Is(tc.err, &api.Error{Code: tc.code}) {
			t.Errorf("%s: errors.Is by code is false", tc.name)
		}
	}
	if e := api.AsError(tests[2].err); e.Detail["slug"] != "nope" {
		t.Errorf("prompt_not_found detail = %v, want slug nope", e.Detail)
	}
	// Validation before sending: nothing reaches the service.
	for _, tc := range []struct {
		p    api.UploadParams
		code string
	}{
		{api.UploadParams{ExternalID: strings.Repeat("x", 129)}, "external_id_too_long"},
		{api.UploadParams{Metadata: map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": 1}}}}}, "metadata_too_deep"},
		{api.UploadParams{Metadata: map[string]any{"a": []any{map[string]any{}}}}, "metadata_value_invalid"},
		{api.UploadParams{Metadata: map[string]any{"k": "whsec_abc"}}, "metadata_value_invalid"},
		{api.UploadParams{Metadata: []int{1}}, "metadata_not_object"},
		{api.UploadParams{Metadata: map[string]string{strings.Repeat("k", 65): "v"}}, "metadata_key_too_long"},
		{api.UploadParams{Metadata: map[string]string{"k": strings.Repeat("v", 4100)}}, "metadata_too_large"},
		{api.UploadParams{Author: "slack:U1"}, "unsupported_author_type"},
		{api.UploadParams{SpeakersCount: 21}, "invalid_speakers_count"},
		{api.UploadParams{Reports: []string{"a", "b", "c", "d"}}, "too_many_reports"},
	} {
		err := up(c, tc.p)
		var ve *api.ValidationError
		if !errors.As(err, &ve) || ve.Code != tc.code {
			t.Errorf("Upload(%+v) = %v, want a validation error %s", tc.p, err, tc.code)
		}
	}
	var j struct{ Items []sandbox.JournalEntry }
	resp, _ := http.Get(sb.Root + sandbox.ControlPath + "/journal")
	json.NewDecoder(resp.Body).Decode(&j)
	resp.Body.Close()
	if n := len(j.Items); n != 6 {
		t.Errorf("the sandbox saw %d requests, want only the 6 that passed local validation", n)
	}
}

// titleOf returns the title or "".
func titleOf(t *api.Transcription) string {
	if t.Title == nil {
		return ""
	}
	return *t.Title
}
