package gdrivetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

const kim = "kim@acme.test"

// TestShortcutsAsDocumented: a shortcut answers with the reference's shortcutDetails (its
// target and the target's type when it was made) only when fields asks for it; without fields,
// files.get gives the default set; once the target is unshared, the shortcut's owner gets
// Drive's recorded 404 for it (shortcut.go).
func TestShortcutsAsDocumented(t *testing.T) {
	fake := gdrivetest.Start(t)
	target := fake.Put("Standup - Recording", "video/mp4", gdrivetest.Root(sam), sam, "", []byte("mp4"))
	short := fake.Shortcut("Standup - Recording", gdrivetest.Root(kim), kim, target)
	c := client(t, fake, kim)

	status, _, body := get(t, c, fake, "/files/"+short+"?fields=id,name,mimeType,kind,shortcutDetails")
	want := recorded(t, "file_shortcut.json")
	if status != http.StatusOK || body["mimeType"] != want["mimeType"] || body["kind"] != want["kind"] {
		t.Fatalf("files.get(shortcut) = %d %v, want 200 like file_shortcut.json", status, body)
	}
	details, _ := body["shortcutDetails"].(map[string]any)
	wantDetails := want["shortcutDetails"].(map[string]any)
	for k := range details {
		if _, ok := wantDetails[k]; !ok {
			t.Errorf("shortcutDetails field %q is not in the reference", k)
		}
	}
	if details["targetId"] != target || details["targetMimeType"] != "video/mp4" {
		t.Errorf("shortcutDetails = %v, want targetId %s, targetMimeType video/mp4", details, target)
	}
	for k := range body {
		if !slices.Contains([]string{"id", "name", "mimeType", "kind", "shortcutDetails"}, k) {
			t.Errorf("files.get with fields: field %q was not asked for", k)
		}
	}
	if _, _, body := get(t, c, fake, "/files/"+short); !slices.Equal(keys(body), []string{"id", "kind", "mimeType", "name"}) {
		t.Errorf("files.get(shortcut) without fields = %v, want kind, id, name and mimeType alone", keys(body))
	}
	if _, _, body := get(t, c, fake, "/files?fields=files(id)&q="+url.QueryEscape("'"+gdrivetest.Root(kim)+"' in parents")); len(body) != 1 {
		t.Errorf("files.list with fields=files(id) = %v, want files alone", body)
	}
	if status, _, body := get(t, c, fake, "/files/"+short+"?fields=id,shortcutDetails(targetId"); status != http.StatusBadRequest {
		t.Errorf("files.get with a fields that does not parse = %d %v, want 400", status, body)
	}

	fake.Unshare(target, kim)
	status, _, body = get(t, c, fake, "/files/"+target+"?fields=id")
	errs, _ := body["error"].(map[string]any)["errors"].([]any)
	if status != http.StatusNotFound || len(errs) != 1 || errs[0].(map[string]any)["reason"] != "notFound" {
		t.Errorf("files.get(target) once unshared = %d %v, want Drive's 404 notFound", status, body)
	}
	if status, _, _ := get(t, client(t, fake, sam), fake, "/files/"+target+"?fields=id"); status != http.StatusOK {
		t.Errorf("files.get(target) by its owner = %d, want 200", status)
	}
}

// TestTokensAsRecorded: a Drive call with a token asked for another API's scope alone gets
// Google's recorded insufficient-scopes answer; a token asked for a scope the service account's
// domain-wide delegation does not grant is refused as recorded (token.go).
func TestTokensAsRecorded(t *testing.T) {
	fake := gdrivetest.Start(t)
	meetOnly := scoped(t, fake, sam, "https://www.googleapis.com/auth/meetings.space.readonly")
	status, _, body := get(t, meetOnly, fake, "/files")
	want := recorded(t, "error_insufficientPermissions.json")["error"].(map[string]any)
	got, _ := body["error"].(map[string]any)
	if status != http.StatusForbidden || got == nil || !slices.Equal(keys(got), keys(want)) || got["status"] != want["status"] ||
		got["message"] != want["message"] {
		t.Errorf("files.list with a Meet-only token = %d %v, want 403 like %v", status, body, want)
	}
	detail := got["details"].([]any)[0].(map[string]any)
	if wd := want["details"].([]any)[0].(map[string]any); detail["reason"] != wd["reason"] || !slices.Equal(keys(detail), keys(wd)) {
		t.Errorf("details[0] = %v, want like %v", detail, wd)
	}

	fake.Delegate(drive.DriveReadonlyScope)
	jwt, err := google.JWTConfigFromJSON(fake.ServiceAccountJSON(), drive.DriveReadonlyScope, "https://www.googleapis.com/auth/meetings.space.readonly")
	if err != nil {
		t.Fatal(err)
	}
	jwt.Subject = sam
	_, err = jwt.TokenSource(context.Background()).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a token for an undelegated scope = %v, want a 401 from the token endpoint", err)
	}
	var gotBody map[string]any
	json.Unmarshal(re.Body, &gotBody)
	wantBody := recorded(t, "token_unauthorized_client.json")
	if !slices.Equal(keys(gotBody), keys(wantBody)) || gotBody["error"] != wantBody["error"] || gotBody["error_description"] != wantBody["error_description"] {
		t.Errorf("token endpoint answer = %s, want %v", re.Body, wantBody)
	}
	if status, _, body := get(t, scoped(t, fake, sam, drive.DriveReadonlyScope), fake, "/about?fields=user"); status != http.StatusOK {
		t.Errorf("about.get with a token for the delegated scope = %d %v, want 200", status, body)
	}
}

// scoped is an HTTP client signed in to fake as user with scopes.
func scoped(t *testing.T, fake *gdrivetest.Server, user string, scopes ...string) *http.Client {
	t.Helper()
	jwt, err := google.JWTConfigFromJSON(fake.ServiceAccountJSON(), scopes...)
	if err != nil {
		t.Fatal(err)
	}
	jwt.Subject = user
	return jwt.Client(context.Background())
}

// TestMeetLayouts: under the legacy layout a recording lands in the organizer's "Meet
// Recordings" folder; under the folder layout in a subfolder of the meeting in their "Google
// Meet" folder, each participant holding a shortcut to it in theirs; the switch renames the
// legacy folder and keeps what it holds (meet.go).
func TestMeetLayouts(t *testing.T) {
	fake := gdrivetest.Start(t)
	old := fake.MeetRecording(gdrivetest.LegacyLayout, sam, []string{kim}, "Standup (2026-07-01 10:00 GMT+2)", []byte("old"))
	legacy := fake.SwitchMeetLayout(sam)
	id := fake.MeetRecording(gdrivetest.FolderLayout, sam, []string{kim}, "Standup (2026-08-01 10:00 GMT+2)", []byte("new"))
	for _, tc := range []struct {
		user string
		path []string // folder names from the root, then the file's
		mime string
		want string // the file's id, or the shortcut's target
	}{
		{sam, []string{gdrivetest.RenamedLegacyFolder, "Standup (2026-07-01 10:00 GMT+2) - Recording"}, "video/mp4", old},
		{sam, []string{gdrivetest.MeetFolder, "Standup (2026-08-01 10:00 GMT+2)", "Standup (2026-08-01 10:00 GMT+2) - Recording"}, "video/mp4", id},
		{kim, []string{gdrivetest.MeetFolder, "Standup (2026-08-01 10:00 GMT+2)", "Standup (2026-08-01 10:00 GMT+2) - Recording"}, gdrivetest.ShortcutMime, id},
	} {
		c := client(t, fake, tc.user)
		parent := gdrivetest.Root(tc.user)
		var f map[string]any
		for _, name := range tc.path {
			q := url.QueryEscape("'" + parent + "' in parents and name = '" + name + "'")
			_, _, body := get(t, c, fake, "/files?fields=files(id,mimeType,shortcutDetails)&q="+q)
			files, _ := body["files"].([]any)
			if len(files) != 1 {
				t.Fatalf("%s: %q in %s = %v, want one", tc.user, name, parent, body)
			}
			f = files[0].(map[string]any)
			parent = f["id"].(string)
		}
		got := f["id"]
		if d, ok := f["shortcutDetails"].(map[string]any); ok {
			got = d["targetId"]
		}
		if f["mimeType"] != tc.mime || got != tc.want {
			t.Errorf("%s: %v = %v, want a %s of %s", tc.user, tc.path, f, tc.mime, tc.want)
		}
	}
	if legacy == "" {
		t.Errorf("SwitchMeetLayout(%s) found no %q folder", sam, gdrivetest.LegacyFolder)
	}
	resp, err := client(t, fake, kim).Get(fake.URL + "/drive/v3/files/" + id + "?alt=media")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "new" {
		t.Errorf("a participant downloading the target read %q", b)
	}
}
