package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name   string
		header map[string]string
		path   string
		status int
		code   string
	}{
		{"no header", nil, "/workspace", 401, "missing_api_key"},
		{"not bearer", map[string]string{"Authorization": "Basic " + ownerKey}, "/workspace", 401, "missing_api_key"},
		{"unknown key", map[string]string{"Authorization": "Bearer mk_live_nope"}, "/workspace", 401, "invalid_api_key"},
		{"revoked", map[string]string{"Authorization": "Bearer mk_live_revoked"}, "/workspace", 401, "api_key_revoked"},
		{"expired", map[string]string{"Authorization": "Bearer mk_live_expired"}, "/workspace", 401, "api_key_expired"},
		{"creator left", map[string]string{"Authorization": "Bearer mk_live_gone_member"}, "/workspace", 401, "api_key_deactivated"},
		{"key in URL", nil, "/workspace?api_key=" + ownerKey, 401, "api_key_in_url"},
		{"key in URL besides header", map[string]string{"Authorization": "Bearer " + ownerKey}, "/transcriptions?x=" + ownerKey, 401, "api_key_in_url"},
		{"free plan", map[string]string{"Authorization": "Bearer mk_live_free_plan"}, "/workspace", 403, "api_access_denied"},
		{"valid", map[string]string{"Authorization": "Bearer " + ownerKey}, "/workspace", 200, ""},
		{"scheme in lower case", map[string]string{"Authorization": "bearer " + ownerKey}, "/workspace", 200, ""},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, "/workspace", 401, "missing_api_key"},
	}
	for _, tc := range tests {
		r := h.do(req{method: "GET", path: tc.path, header: tc.header})
		if r.status != tc.status || r.code() != tc.code {
			t.Errorf("%s: GET %s = %d %q, want %d %q", tc.name, tc.path, r.status, r.code(), tc.status, tc.code)
		}
	}
	// The key never appears in the journal, not even from a URL.
	j := h.do(req{method: "GET", path: h.ts.URL + ControlPath + "/journal"})
	if bytes.Contains(j.body, []byte(ownerKey)) {
		t.Errorf("journal holds a key in clear: %s", j.body)
	}
}

func TestScopes(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	tests := []struct {
		name string
		rq   req
		code string
	}{
		{"upload", req{method: "POST", path: "/transcriptions", body: wav(2, 0, 2), header: map[string]string{"Content-Disposition": "attachment; filename=a.wav"}}, "upload_scope_required"},
		{"patch", req{method: "PATCH", path: "/transcriptions/" + id, jsonBody: map[string]any{"author": nil}}, "upload_scope_required"},
		{"delete", req{method: "DELETE", path: "/transcriptions/" + id}, "delete_scope_required"},
		{"reports", req{method: "POST", path: "/transcriptions/" + id + "/reports", jsonBody: map[string]any{"reports": []string{"summary"}}}, "reports_scope_required"},
		{"prompts", req{method: "GET", path: "/prompts"}, "reports_scope_required"},
		{"members", req{method: "GET", path: "/workspace/members"}, "members_scope_required"},
		{"identities", req{method: "PUT", path: "/workspace/members/" + samID + "/identities", jsonBody: map[string]string{"provider": "a", "external_id": "b"}}, "members_scope_required"},
	}
	for _, tc := range tests {
		tc.rq.key = readKey
		r := h.do(tc.rq)
		if r.status != 403 || r.code() != tc.code {
			t.Errorf("%s with a read-only key = %d %q, want 403 %q", tc.name, r.status, r.code(), tc.code)
		}
	}
	// An upload with reports needs the reports right too.
	r := h.upload(ritaKey, "a.wav", "reports=summary", wav(2, 0, 3), nil)
	if r.status != 403 || r.code() != "reports_scope_required" {
		t.Errorf("upload with reports without the right = %d %s", r.status, r.code())
	}
	// Reading works with the default read-only key.
	if r := h.get(readKey, "/transcriptions/"+id); r.status != 200 {
		t.Errorf("GET with read-only key = %d", r.status)
	}
	// PATCH with an OAuth token.
	r = h.do(req{method: "PATCH", path: "/transcriptions/" + id, key: oauthKey, jsonBody: map[string]any{"author": nil}})
	if r.status != 403 || r.code() != "author_requires_api_key" {
		t.Errorf("PATCH with OAuth token = %d %s, want 403 author_requires_api_key", r.status, r.code())
	}
}

func TestUnknownEndpoint(t *testing.T) {
	h := newHarness(t)
	resp, err := http.Get(h.base + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"code":"not_found"`) {
		t.Errorf("GET /nope = %d %s, want a JSON 404", resp.StatusCode, b)
	}
	resp, err = http.Get(h.base + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte("openapi: 3.1")) {
		t.Errorf("GET openapi.yaml = %d %.40s", resp.StatusCode, b)
	}
}
