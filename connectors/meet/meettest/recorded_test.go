package meettest_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"
	meet "google.golang.org/api/meet/v2"
	"google.golang.org/api/option"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/connectors/meet/meettest"
)

const (
	sam = "sam@acme.test"
	kim = "kim@acme.test"
)

var t0 = time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)

func start(t *testing.T) (*meettest.Server, *gdrivetest.Server) {
	drv := gdrivetest.Start(t)
	fake := meettest.Start(t, drv)
	fake.Now = func() time.Time { return t0.Add(24 * time.Hour) }
	return fake, drv
}

// client is an HTTP client signed in through drv's token endpoint as user with scopes.
func client(t *testing.T, drv *gdrivetest.Server, user string, scopes ...string) *http.Client {
	t.Helper()
	jwt, err := google.JWTConfigFromJSON(drv.ServiceAccountJSON(), scopes...)
	if err != nil {
		t.Fatal(err)
	}
	jwt.Subject = user
	return jwt.Client(context.Background())
}

func get(t *testing.T, c *http.Client, fake *meettest.Server, path string) (int, string, map[string]any) {
	t.Helper()
	resp, err := c.Get(fake.URL + "/v2/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %q", path, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

func recorded(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return body
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// within reports the fields of got that want lacks.
func within(got, want map[string]any) []string {
	var extra []string
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	return extra
}

// TestAnswersHaveDocumentedFields: conferenceRecords.list, recordings.list and spaces.get answer
// with the v2 reference's fields only; driveDestination holds the Drive file id and its
// playback link once the file is generated, and no other state carries one.
func TestAnswersHaveDocumentedFields(t *testing.T) {
	fake, drv := start(t)
	conf := fake.Meeting(sam, []string{kim}, t0, t0.Add(time.Hour))
	_, file := fake.RecordToDrive(conf, gdrivetest.FolderLayout, "Standup (2026-08-03 10:00 GMT)", []byte("mp4"))
	fake.Record(conf, t0.Add(2*time.Hour)) // still STARTED
	c := client(t, drv, sam, meet.MeetingsSpaceReadonlyScope)

	for _, tc := range []struct{ path, file, list string }{
		{"conferenceRecords", "conference_records_list.json", "conferenceRecords"},
		{conf + "/recordings", "recordings_list.json", "recordings"},
	} {
		status, ctype, body := get(t, c, fake, tc.path)
		want := recorded(t, tc.file)
		if status != http.StatusOK || !strings.HasPrefix(ctype, "application/json") || len(within(body, want)) > 0 {
			t.Errorf("GET %s = %d %s %v, want 200 JSON with %s's fields", tc.path, status, ctype, body, tc.file)
		}
		wantItem := want[tc.list].([]any)[0].(map[string]any)
		items, _ := body[tc.list].([]any)
		if len(items) == 0 {
			t.Fatalf("GET %s: no %s", tc.path, tc.list)
		}
		for _, it := range items {
			m := it.(map[string]any)
			if extra := within(m, wantItem); len(extra) > 0 {
				t.Errorf("GET %s: %s[] fields %v are not in the reference", tc.path, tc.list, extra)
			}
			if d, ok := m["driveDestination"].(map[string]any); ok {
				if m["state"] != meettest.FileGenerated || d["file"] != file || d["exportUri"] != "https://drive.google.com/file/d/"+file+"/view" ||
					!slices.Equal(keys(d), keys(wantItem["driveDestination"].(map[string]any))) {
					t.Errorf("recording %v: driveDestination %v, want file %s and its exportUri, on FILE_GENERATED alone", m["name"], d, file)
				}
			} else if tc.list == "recordings" && m["state"] == meettest.FileGenerated {
				t.Errorf("recording %v is FILE_GENERATED without a driveDestination", m["name"])
			}
		}
	}
	var spaceName string
	_, _, body := get(t, c, fake, conf)
	spaceName, _ = body["space"].(string)
	status, _, body := get(t, c, fake, spaceName)
	if extra := within(body, recorded(t, "space.json")); status != http.StatusOK || len(extra) > 0 || body["meetingUri"] != "https://meet.google.com/"+body["meetingCode"].(string) {
		t.Errorf("GET %s = %d %v (fields not in the reference: %v)", spaceName, status, body, extra)
	}
}

// TestErrorsAsRecorded: a call without a valid token, and one with a token lacking Meet's
// scopes, get Google's recorded answers.
func TestErrorsAsRecorded(t *testing.T) {
	fake, drv := start(t)
	for _, tc := range []struct {
		name string
		c    *http.Client
		file string
	}{
		{"no token", http.DefaultClient, "error_unauthenticated.json"},
		{"a Drive-only token", client(t, drv, sam, drive.DriveReadonlyScope), "error_insufficient_scopes.json"},
	} {
		status, ctype, body := get(t, tc.c, fake, "conferenceRecords")
		want := recorded(t, tc.file)["error"].(map[string]any)
		got, _ := body["error"].(map[string]any)
		if got == nil || status != int(want["code"].(float64)) || !slices.Equal(keys(got), keys(want)) || got["status"] != want["status"] ||
			got["message"] != want["message"] || got["code"] != want["code"] || !strings.HasPrefix(ctype, "application/json") {
			t.Errorf("%s: %d %v, want %v", tc.name, status, body, want)
		}
	}
}

// TestConferencesAsDocumented: conferenceRecords.list is newest first, in pages of 25 by
// default (100 at most), filtered by end_time, only to the space's owner and participants, and
// forgets a conference 30 days after it ended; recordings.list is oldest first, in pages of 10.
func TestConferencesAsDocumented(t *testing.T) {
	fake, drv := start(t)
	var confs []string
	for i := range 27 {
		confs = append(confs, fake.Meeting(sam, []string{kim}, t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour+30*time.Minute)))
	}
	ongoing := fake.Meeting(sam, nil, t0.Add(30*time.Hour), time.Time{})
	old := fake.Meeting(sam, nil, t0.Add(-40*24*time.Hour), t0.Add(-40*24*time.Hour+time.Hour))
	svc := signIn(t, fake, drv, sam)
	page, err := svc.ConferenceRecords.List().Do()
	if err != nil || len(page.ConferenceRecords) != 25 || page.NextPageToken == "" || page.ConferenceRecords[0].Name != ongoing ||
		page.ConferenceRecords[1].Name != confs[26] {
		t.Fatalf("list = %v, %v; want 25 newest first (the ongoing one first) and a next page", names(page), err)
	}
	rest, err := svc.ConferenceRecords.List().PageToken(page.NextPageToken).PageSize(500).Do()
	if err != nil || len(rest.ConferenceRecords) != 3 || rest.NextPageToken != "" {
		t.Errorf("second page = %v, %v; want the 3 left and no token", names(rest), err)
	}
	if slices.Contains(append(names(page), names(rest)...), old) {
		t.Errorf("a conference that ended 40 days ago is still listed")
	}
	if _, err := svc.ConferenceRecords.Get(old).Do(); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("get of an expired conference = %v, want 404", err)
	}
	since := t0.Add(25 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	filtered, err := svc.ConferenceRecords.List().Filter(`end_time>="` + since + `"`).Do()
	if err != nil || !slices.Equal(names(filtered), []string{confs[26], confs[25]}) {
		t.Errorf(`list with end_time>="%s" = %v, %v; want the two that ended since, not the ongoing one`, since, names(filtered), err)
	}
	if nulls, err := svc.ConferenceRecords.List().Filter("end_time IS NULL").Do(); err != nil || !slices.Equal(names(nulls), []string{ongoing}) {
		t.Errorf("list with end_time IS NULL = %v, %v; want the ongoing one", names(nulls), err)
	}
	if _, err := svc.ConferenceRecords.List().Filter("duration > 5").Do(); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("list with a filter on an unknown field = %v, want 400", err)
	}
	if l, err := signIn(t, fake, drv, "lee@acme.test").ConferenceRecords.List().Do(); err != nil || len(l.ConferenceRecords) != 0 {
		t.Errorf("list as someone who was in none = %v, %v; want none", names(l), err)
	}

	var recs []string
	for i := range 11 {
		recs = append(recs, fake.Record(confs[0], t0.Add(time.Duration(11-i)*time.Minute)))
	}
	rl, err := svc.ConferenceRecords.Recordings.List(confs[0]).Do()
	if err != nil || len(rl.Recordings) != 10 || rl.NextPageToken == "" || rl.Recordings[0].Name != recs[10] || rl.Recordings[0].State != meettest.Started {
		t.Errorf("recordings.list = %d, %v; want 10 oldest first, STARTED, and a next page", len(rl.Recordings), err)
	}
}

func names(l *meet.ListConferenceRecordsResponse) []string {
	var out []string
	if l == nil {
		return nil
	}
	for _, c := range l.ConferenceRecords {
		out = append(out, c.Name)
	}
	return out
}

// signIn signs the client library in as user with Meet's scope, pointed at fake.
func signIn(t *testing.T, fake *meettest.Server, drv *gdrivetest.Server, user string) *meet.Service {
	t.Helper()
	svc, err := meet.NewService(context.Background(), option.WithHTTPClient(client(t, drv, user, meet.MeetingsSpaceReadonlyScope)),
		option.WithEndpoint(fake.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
