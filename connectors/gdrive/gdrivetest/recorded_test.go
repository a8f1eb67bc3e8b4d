package gdrivetest_test

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

	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

const sam = "sam@acme.test"

// client is an HTTP client signed in to fake as user.
func client(t *testing.T, fake *gdrivetest.Server, user string) *http.Client {
	t.Helper()
	jwt, err := google.JWTConfigFromJSON(fake.ServiceAccountJSON(), drive.DriveReadonlyScope)
	if err != nil {
		t.Fatal(err)
	}
	jwt.Subject = user
	return jwt.Client(context.Background())
}

// get GETs path (with its query) from fake with c, and returns the status, the Content-Type and
// the body decoded as JSON.
func get(t *testing.T, c *http.Client, fake *gdrivetest.Server, path string) (int, string, map[string]any) {
	t.Helper()
	resp, err := c.Get(fake.URL + "/drive/v3" + path)
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

// TestErrorAnswersMatchRecorded: each refusal the fake gives has the status, the fields, the
// domain, the reason and the message of Drive's answer as documented or recorded
// (testdata/README.md).
func TestErrorAnswersMatchRecorded(t *testing.T) {
	for _, tc := range []struct {
		file string
		// provoke sets the fake up and returns the request that gets the refusal; anonymous
		// sends it without a token.
		provoke   func(fake *gdrivetest.Server) string
		anonymous bool
	}{
		{"error_userRateLimitExceeded.json", func(f *gdrivetest.Server) string { f.Fail(403); return "/files" }, false},
		{"error_rateLimitExceeded.json", func(f *gdrivetest.Server) string { f.Fail(429); return "/files" }, false},
		{"error_dailyLimitExceeded.json", func(f *gdrivetest.Server) string { f.FailWith(gdrivetest.ReasonDailyLimit); return "/files" }, false},
		{"error_domainPolicy.json", func(f *gdrivetest.Server) string { f.FailWith(gdrivetest.ReasonDomainPolicy); return "/about" }, false},
		{"error_authError.json", func(*gdrivetest.Server) string { return "/files" }, true},
		{"error_fileNotDownloadable.json", func(f *gdrivetest.Server) string {
			return "/files/" + f.Put("notes", "application/vnd.google-apps.document", gdrivetest.Root(sam), sam, "", nil) + "?alt=media"
		}, false},
		{"error_notFound.json", func(f *gdrivetest.Server) string { // a shared-drive file without supportsAllDrives
			return "/files/" + f.Put("call.wav", "audio/wav", "0ASales", "", "0ASales", []byte("a"))
		}, false},
		{"error_downloadQuotaExceeded.json", func(f *gdrivetest.Server) string {
			id := f.Put("call.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("a"))
			f.RefuseDownload(id, gdrivetest.ReasonDownloadQuota)
			return "/files/" + id + "?alt=media"
		}, false},
		{"error_cannotDownloadFile.json", func(f *gdrivetest.Server) string {
			id := f.Put("call.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("a"))
			f.RefuseDownload(id, gdrivetest.ReasonCannotDownload)
			return "/files/" + id + "?alt=media"
		}, false},
		{"error_cannotDownloadAbusiveFile.json", func(f *gdrivetest.Server) string {
			id := f.Put("call.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("a"))
			f.SetAbusive(id)
			return "/files/" + id + "?alt=media"
		}, false},
		{"error_teamDriveIdRequiresTeamDriveCorpora.json", func(*gdrivetest.Server) string {
			return "/files?driveId=0ASales&supportsAllDrives=true&includeItemsFromAllDrives=true"
		}, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fake := gdrivetest.Start(t)
			path := tc.provoke(fake)
			c := client(t, fake, sam)
			if tc.anonymous {
				c = http.DefaultClient
			}
			status, ctype, body := get(t, c, fake, path)
			want := recorded(t, tc.file)
			wantErr, _ := want["error"].(map[string]any)
			if wantErr == nil { // the recording shows errors[] alone
				wantErr = want
			}
			gotErr, _ := body["error"].(map[string]any)
			if gotErr == nil {
				t.Fatalf("GET %s = %d %v, want an error like %s", path, status, body, tc.file)
			}
			if code, ok := wantErr["code"].(float64); ok && status != int(code) || ok && gotErr["code"] != code {
				t.Errorf("GET %s = %d (code %v), want %v", path, status, gotErr["code"], code)
			}
			if !strings.HasPrefix(ctype, "application/json") {
				t.Errorf("GET %s: Content-Type %q, want JSON", path, ctype)
			}
			if _, ok := wantErr["code"]; ok && !slices.Equal(keys(gotErr), keys(wantErr)) {
				t.Errorf("error fields = %v, want %v", keys(gotErr), keys(wantErr))
			}
			gotList, _ := gotErr["errors"].([]any)
			wantList, _ := wantErr["errors"].([]any)
			if len(gotList) != 1 || len(wantList) != 1 {
				t.Fatalf("errors[] = %v, want one entry like %v", gotList, wantList)
			}
			g, w := gotList[0].(map[string]any), wantList[0].(map[string]any)
			if !slices.Equal(keys(g), keys(w)) {
				t.Errorf("errors[0] fields = %v, want %v", keys(g), keys(w))
			}
			for _, k := range []string{"domain", "reason", "location", "locationType"} {
				if g[k] != w[k] {
					t.Errorf("errors[0].%s = %v, want %v", k, g[k], w[k])
				}
			}
			if msg, _ := g["message"].(string); g["reason"] == "notFound" {
				if !strings.HasPrefix(msg, "File not found: ") || !strings.HasSuffix(msg, ".") || gotErr["message"] != msg {
					t.Errorf("message = %q, want \"File not found: <id>.\" in both places", msg)
				}
			} else if msg != w["message"] || wantErr["message"] != nil && gotErr["message"] != wantErr["message"] {
				t.Errorf("message = %q / %q, want %q / %q", msg, gotErr["message"], w["message"], wantErr["message"])
			}
		})
	}
}

// TestAnswersHaveDocumentedFields: files.list, changes.list and changes.getStartPageToken answer
// with the reference's fields only, and its kind.
func TestAnswersHaveDocumentedFields(t *testing.T) {
	fake := gdrivetest.Start(t)
	fake.Put("call.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("a"))
	c := client(t, fake, sam)
	for _, tc := range []struct{ path, file, list string }{
		{"/files?pageSize=1&fields=*", "files_list.json", ""},
		{"/changes?pageToken=1&fields=*", "changes_list.json", "changes"},
		{"/changes/startPageToken", "start_page_token.json", ""},
	} {
		status, _, body := get(t, c, fake, tc.path)
		want := recorded(t, tc.file)
		if status != http.StatusOK || body["kind"] != want["kind"] {
			t.Errorf("GET %s = %d, kind %v; want 200, kind %v", tc.path, status, body["kind"], want["kind"])
		}
		for _, k := range keys(body) {
			if _, ok := want[k]; !ok {
				t.Errorf("GET %s: field %q is not in the reference (%s)", tc.path, k, tc.file)
			}
		}
		if tc.list == "" {
			continue
		}
		items, _ := body[tc.list].([]any)
		wantItem := want[tc.list].([]any)[0].(map[string]any)
		for _, it := range items {
			for k := range it.(map[string]any) {
				if _, ok := wantItem[k]; !ok {
					t.Errorf("GET %s: %s[] field %q is not in the reference", tc.path, tc.list, k)
				}
			}
			if it.(map[string]any)["kind"] != wantItem["kind"] {
				t.Errorf("GET %s: %s[] kind %v, want %v", tc.path, tc.list, it.(map[string]any)["kind"], wantItem["kind"])
			}
		}
	}
}
