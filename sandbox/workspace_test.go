package sandbox

import (
	"net/http"
	"net/url"
	"testing"
)

func TestWorkspace(t *testing.T) {
	h := newHarness(t)
	r := h.get(ownerKey, "/workspace")
	if r.status != 200 {
		t.Fatalf("GET /workspace = %d %s", r.status, r.body)
	}
	var ws struct {
		Workspace struct{ ID, Name string }
		Balance   struct {
			AvailableMinutes float64 `json:"available_minutes"`
		}
		Limits map[string]int
		Key    struct {
			Scopes    []string
			ExpiresAt *string `json:"expires_at"`
		}
	}
	r.json(t, &ws)
	if ws.Workspace.ID != acmeID || ws.Workspace.Name != "Acme" {
		t.Errorf("workspace = %+v, want Acme %s", ws.Workspace, acmeID)
	}
	if ws.Balance.AvailableMinutes != 600 {
		t.Errorf("available_minutes = %v, want 600", ws.Balance.AvailableMinutes)
	}
	want := map[string]int{"max_file_size_mb": 2048, "concurrency": 2, "max_duration_hours": 10, "reports_per_upload": 3, "reports_per_day": 300}
	for k, v := range want {
		if ws.Limits[k] != v {
			t.Errorf("limits.%s = %d, want %d", k, ws.Limits[k], v)
		}
	}
	if len(ws.Key.Scopes) != 5 || ws.Key.ExpiresAt != nil {
		t.Errorf("key = %+v, want 5 scopes and no expiry", ws.Key)
	}
	r = h.get(readKey, "/workspace")
	r.json(t, &ws)
	if len(ws.Key.Scopes) != 1 || ws.Key.Scopes[0] != "read" {
		t.Errorf("read-only key scopes = %v, want [read]", ws.Key.Scopes)
	}
}

func TestMembers(t *testing.T) {
	h := newHarness(t)
	r := h.get(ownerKey, "/workspace/members")
	if r.status != 200 {
		t.Fatalf("GET /workspace/members = %d %s", r.status, r.body)
	}
	var list struct {
		Items []member `json:"items"`
		Total int
	}
	r.json(t, &list)
	if list.Total != 3 || len(list.Items) != 3 {
		t.Fatalf("members total = %d (%d items), want 3 active members", list.Total, len(list.Items))
	}
	for _, m := range list.Items {
		if m.ID == goneID {
			t.Errorf("inactive member %s listed", m.Email)
		}
		if m.ID == samID && (len(m.Identities) != 1 || m.Identities[0] != (identity{"zoom", "u-1"})) {
			t.Errorf("sam identities = %v, want [zoom u-1]", m.Identities)
		}
	}
	for _, tc := range []struct {
		key, code string
		status    int
	}{
		{readKey, "members_scope_required", 403},
		{samKey, "members_scope_required", 403}, // has the scope but is not a workspace owner
		{oauthKey, "api_key_required", 403},
	} {
		if r := h.get(tc.key, "/workspace/members"); r.status != tc.status || r.code() != tc.code {
			t.Errorf("GET /workspace/members with %s = %d %s, want %d %s", tc.key, r.status, r.code(), tc.status, tc.code)
		}
	}
}

func TestIdentities(t *testing.T) {
	h := newHarness(t)
	put := func(key, user string, body any) *response {
		return h.do(req{method: "PUT", path: "/workspace/members/" + user + "/identities", key: key, jsonBody: body})
	}
	del := func(key, user, provider, ext string) *response {
		return h.do(req{method: "DELETE", path: "/workspace/members/" + user + "/identities/" + url.PathEscape(provider) + "/" + url.PathEscape(ext), key: key})
	}
	tests := []struct {
		name   string
		resp   *response
		status int
		code   string
	}{
		{"create", put(ownerKey, ritaID, map[string]string{"provider": "Zoom", "external_id": "AbC/1:2"}), 201, ""},
		{"same pair again", put(ownerKey, ritaID, map[string]string{"provider": "zoom", "external_id": "AbC/1:2"}), 200, ""},
		{"case matters in external_id", put(ownerKey, samID, map[string]string{"provider": "zoom", "external_id": "abc/1:2"}), 201, ""},
		{"bound to another member", put(ownerKey, samID, map[string]string{"provider": "zoom", "external_id": "AbC/1:2"}), 409, "identity_conflict"},
		{"bad provider", put(ownerKey, samID, map[string]string{"provider": "zoom!", "external_id": "x"}), 422, "invalid_identity"},
		{"long provider", put(ownerKey, samID, map[string]string{"provider": "abcdefghijabcdefghijabcdefghijabc", "external_id": "x"}), 422, "invalid_identity"},
		{"non-ASCII external_id", put(ownerKey, samID, map[string]string{"provider": "zoom", "external_id": "é"}), 422, "invalid_identity"},
		{"empty external_id", put(ownerKey, samID, map[string]string{"provider": "zoom", "external_id": ""}), 422, "invalid_identity"},
		{"inactive member", put(ownerKey, goneID, map[string]string{"provider": "zoom", "external_id": "g"}), 404, "member_not_found"},
		{"unknown member", put(ownerKey, "aaaaaaaa-0000-4000-8000-00000000ffff", map[string]string{"provider": "zoom", "external_id": "g"}), 404, "member_not_found"},
		{"no right", put(samKey, samID, map[string]string{"provider": "zoom", "external_id": "g"}), 403, "members_scope_required"},
		{"oauth", put(oauthKey, samID, map[string]string{"provider": "zoom", "external_id": "g"}), 403, "api_key_required"},
		{"delete encoded", del(ownerKey, ritaID, "zoom", "AbC/1:2"), 204, ""},
		{"delete again", del(ownerKey, ritaID, "zoom", "AbC/1:2"), 404, "identity_not_found"},
		{"delete oauth", del(oauthKey, samID, "zoom", "u-1"), 403, "api_key_required"},
	}
	for _, tc := range tests {
		if tc.resp.status != tc.status || tc.resp.code() != tc.code {
			t.Errorf("%s: got %d %q, want %d %q (%s)", tc.name, tc.resp.status, tc.resp.code(), tc.status, tc.code, tc.resp.body)
		}
	}
	// The provider is stored in lower case; the member list shows it.
	r := put(ownerKey, ritaID, map[string]string{"provider": "GDrive", "external_id": "Rita@X"})
	var ident identity
	r.json(t, &ident)
	if ident != (identity{"gdrive", "Rita@X"}) {
		t.Errorf("PUT identity answered %+v, want gdrive Rita@X", ident)
	}
	// An identity then resolves X-Author external:<provider>:<id>.
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), map[string]string{"X-Author": "external:gdrive:Rita@X"})
	if got := h.record(ownerKey, id)["author"].(map[string]any)["id"]; got != ritaID {
		t.Errorf("author of external:gdrive:Rita@X = %v, want %s", got, ritaID)
	}
	if r := h.upload(ownerKey, "a.wav", "", wav(2, 0, 1), map[string]string{"X-Author": "external:gdrive:rita@x"}); r.code() != "author_not_member" {
		t.Errorf("external id compared case-insensitively: %d %s", r.status, r.body)
	}
}

func TestProjects(t *testing.T) {
	h := newHarness(t)
	var list struct {
		Items []projectJSON
		Total int
	}
	h.get(ownerKey, "/projects").json(t, &list)
	if list.Total != 2 || list.Items[0].ID != boardID || list.Items[1].ID != salesID {
		t.Errorf("owner projects = %+v, want Board then Sales (newest first)", list.Items)
	}
	h.get(samKey, "/projects").json(t, &list)
	if list.Total != 1 || list.Items[0].ID != salesID {
		t.Errorf("sam projects = %+v, want only Sales", list.Items)
	}
}

func TestPrompts(t *testing.T) {
	h := newHarness(t)
	slugs := func(key string) map[string]prompt {
		r := h.get(key, "/prompts")
		if r.status != http.StatusOK {
			t.Fatalf("GET /prompts = %d %s", r.status, r.body)
		}
		var out struct{ Prompts []prompt }
		r.json(t, &out)
		m := map[string]prompt{}
		for _, p := range out.Prompts {
			m[p.Slug] = p
		}
		return m
	}
	owner := slugs(ownerKey)
	for _, s := range []string{"summary", "action-items", "meeting-minutes", "follow-up-email", "deal-notes", "broken"} {
		if _, ok := owner[s]; !ok {
			t.Errorf("owner prompts lack %q", s)
		}
	}
	if p := owner["summary"]; p.Kind != "builtin" || p.Scope != nil || p.Description == nil {
		t.Errorf("summary = %+v, want builtin with a category and no scope", p)
	}
	if p := owner["deal-notes"]; p.Kind != "custom" || p.Scope == nil || *p.Scope != "workspace" {
		t.Errorf("deal-notes = %+v, want custom workspace", p)
	}
	for _, s := range []string{"my-draft", "sam-private"} {
		if _, ok := owner[s]; ok {
			t.Errorf("owner sees %q (a draft or another member's personal template)", s)
		}
	}
	if _, ok := slugs(samKey)["sam-private"]; !ok {
		t.Errorf("sam does not see his own personal template")
	}
	if r := h.get(readKey, "/prompts"); r.status != 403 || r.code() != "reports_scope_required" {
		t.Errorf("GET /prompts without the reports right = %d %s", r.status, r.code())
	}
}
