package teamstest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// recorded is an answer of the real Graph kept in testdata (see its README).
type recorded struct {
	status int
	header http.Header
	body   map[string]any
}

func readRecorded(t *testing.T, name string) recorded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(strings.Join(lines, ""))), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var rec recorded
	rec.status, rec.header = resp.StatusCode, resp.Header
	if err := json.NewDecoder(resp.Body).Decode(&rec.body); err != nil {
		t.Fatalf("%s: body: %v", name, err)
	}
	return rec
}

// get asks the fake as the app does: a token first, then the request, redirects not followed.
func get(t *testing.T, fake *teamstest.Server, path string, header http.Header) recorded {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {teamstest.ClientID}, "client_secret": {teamstest.ClientSecret},
		"scope": {"https://graph.microsoft.com/.default"}}
	resp, err := http.PostForm(fake.URL+"/"+teamstest.TenantID+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, fake.URL+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := recorded{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&out.body); err != nil {
		t.Fatalf("GET %s = %d %q: not JSON", path, resp.StatusCode, b)
	}
	return out
}

// TestRecordedAnswers: in each situation of a recorded answer of the real Graph, the fake
// answers with the same status, media type and JSON shape; errors also with the request-id
// headers, the innerError's keys and the error code (and Graph's message, where the fake claims
// it).
func TestRecordedAnswers(t *testing.T) {
	day := time.Now().Add(-time.Hour).UTC()
	eventual := http.Header{"Consistencylevel": {"eventual"}}
	for _, tc := range []struct {
		file    string
		ask     func(*teamstest.Server) (path string, header http.Header)
		message bool // the fake's error.message is Graph's
		exact   bool // the docs did not shorten the items: same keys
	}{
		{"payment_required.http", func(f *teamstest.Server) (string, http.Header) {
			u := f.AddUser("", "Sam Lee", "sam@acme.test")
			r := f.AddRecording(u.ID, day, []byte("x"))
			f.PaymentRequired(true)
			return "/v1.0/users/" + u.ID + "/onlineMeetings/" + r.MeetingID + "/recordings/" + r.ID + "/content", nil
		}, true, true},
		{"no_access_policy.http", func(f *teamstest.Server) (string, http.Header) {
			u := f.AddUser("", "Sam Lee", "sam@acme.test")
			r := f.AddRecording(u.ID, day, []byte("x"))
			f.NoPolicy(u.ID)
			return "/v1.0/users/" + u.ID + "/onlineMeetings/" + r.MeetingID + "/recordings/" + r.ID, nil
		}, true, true},
		{"unsupported_query.http", func(f *teamstest.Server) (string, http.Header) {
			g := f.AddGroup("team@acme.test", f.AddUser("", "Sam Lee", "sam@acme.test").ID)
			return "/v1.0/groups/" + g.ID + "/transitiveMembers/microsoft.graph.user?$select=displayName,id", nil
		}, false, true},
		{"transitive_members_user.http", func(f *teamstest.Server) (string, http.Header) {
			g := f.AddGroup("team@acme.test", f.AddUser("", "Sam Lee", "sam@acme.test").ID)
			return "/v1.0/groups/" + g.ID + "/transitiveMembers/microsoft.graph.user?$count=true&$select=displayName,id", eventual
		}, false, false},
		{"adhoc_getallrecordings.http", func(f *teamstest.Server) (string, http.Header) {
			u := f.AddUser("", "Sam Lee", "sam@acme.test")
			f.AddAdhocRecording(u.ID, day, []byte("x"))
			return "/v1.0/users/" + u.ID + "/adhocCalls/getAllRecordings(userId='" + u.ID + "',startDateTime=" +
				day.Add(-time.Hour).Format(time.RFC3339) + ",endDateTime=" + day.Add(time.Hour).Format(time.RFC3339) + ")", nil
		}, false, true},
		{"recordings_delta.http", func(f *teamstest.Server) (string, http.Header) {
			u := f.AddUser("", "Sam Lee", "sam@acme.test")
			f.AddRecording(u.ID, day, []byte("x"))
			return "/v1.0/users/" + u.ID + "/onlineMeetings/getAllRecordings(meetingOrganizerUserId='" + u.ID + "')/delta", nil
		}, false, false},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".http"), func(t *testing.T) {
			want := readRecorded(t, tc.file)
			fake := teamstest.Start(t)
			path, header := tc.ask(fake)
			got := get(t, fake, path, header)
			if got.status != want.status || mediaType(got.header) != mediaType(want.header) {
				t.Errorf("GET %s = %d %s, want %d %s", path, got.status, mediaType(got.header), want.status, mediaType(want.header))
			}
			if e, ok := want.body["error"].(map[string]any); ok {
				checkError(t, e, got, tc.message)
				return
			}
			sameShape(t, "", want.body, got.body, false)
			items, _ := want.body["value"].([]any)
			gotItems, _ := got.body["value"].([]any)
			if len(gotItems) == 0 {
				t.Fatalf("GET %s: no items", path)
			}
			for _, it := range gotItems {
				sameShape(t, "value[]", items[0], it, tc.exact)
			}
		})
	}
}

// TestRecordedLimitedMembers: without User.Read.All, a group's user members come back as Graph
// returns the members an app may not read: the type and the id, every other property null.
func TestRecordedLimitedMembers(t *testing.T) {
	want := readRecorded(t, "members_limited.http")
	limited := want.body["value"].([]any)[1].(map[string]any) // the device the app may not read
	fake := teamstest.Start(t)
	g := fake.AddGroup("team@acme.test", fake.AddUser("", "Sam Lee", "sam@acme.test").ID)
	fake.Revoke(teamstest.PermUsers)
	got := get(t, fake, "/v1.0/groups/"+g.ID+"/transitiveMembers/microsoft.graph.user?$count=true&$select=id,displayName,mail,userPrincipalName",
		http.Header{"Consistencylevel": {"eventual"}})
	items, _ := got.body["value"].([]any)
	if got.status != want.status || len(items) != 1 {
		t.Fatalf("members without User.Read.All = %d with %d items, want %d with Sam", got.status, len(items), want.status)
	}
	for _, it := range []map[string]any{limited, items[0].(map[string]any)} {
		for k, v := range it {
			if (k == "@odata.type" || k == "id") != (v != nil) {
				t.Errorf("limited member %v: %s = %v; want only @odata.type and id set, the rest null", it, k, v)
			}
		}
	}
}

// checkError compares an error answer with the recorded error resource e.
func checkError(t *testing.T, e map[string]any, got recorded, message bool) {
	t.Helper()
	ge, _ := got.body["error"].(map[string]any)
	sameShape(t, "", map[string]any{"error": e}, got.body, true)
	if ge["code"] != e["code"] || message && ge["message"] != e["message"] {
		t.Errorf("error %v: %v, want code %v (and message %q: %v)", ge["code"], ge["message"], e["code"], e["message"], message)
	}
	inner, _ := ge["innerError"].(map[string]any)
	for _, h := range []string{"request-id", "client-request-id"} {
		if got.header.Get(h) == "" || got.header.Get(h) != inner[h] {
			t.Errorf("header %s = %q, innerError's %v; want both set, the same", h, got.header.Get(h), inner[h])
		}
	}
}

// sameShape checks that got has the keys of want (exactly the same keys with exact), and the
// same shape under each: objects recursively, arrays by their first item.
func sameShape(t *testing.T, at string, want, got any, exact bool) {
	t.Helper()
	w, ok := want.(map[string]any)
	if !ok {
		return
	}
	g, ok := got.(map[string]any)
	if !ok {
		t.Errorf("%s = %v, want an object", at, got)
		return
	}
	for k, wv := range w {
		gv, ok := g[k]
		if !ok {
			t.Errorf("%s: no %q (Graph's answer has it)", at, k)
			continue
		}
		if wo, ok := wv.(map[string]any); ok {
			sameShape(t, at+"."+k, wo, gv, exact)
		}
	}
	if exact {
		for k := range g {
			if _, ok := w[k]; !ok {
				t.Errorf("%s: %q, which Graph's answer does not have", at, k)
			}
		}
	}
}

func mediaType(h http.Header) string {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt
}
