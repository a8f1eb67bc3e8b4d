package s3test

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// TestAnswersAsS3Does sends the fake the requests whose answers from S3 are recorded in
// testdata/ (see its README for where each comes from), in order, and checks each answer has the
// recorded status, S3 headers and XML elements, code and message.
func TestAnswersAsS3Does(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"calls/a.wav", "calls/b.wav", "tiered/it.wav"} {
		if _, err := backend.PutObject(Bucket, k, nil, strings.NewReader("audio of "+k), int64(len("audio of "+k)), nil); err != nil {
			t.Fatal(err)
		}
	}
	aws := NewAWS(backend, "eu-west-1")
	aws.SetNow(func() time.Time { return time.Date(2012, 12, 19, 15, 4, 5, 0, time.UTC) })
	aws.Transition(Bucket, "calls/a.wav", Glacier)
	aws.Transition(Bucket, "tiered/it.wav", ArchiveAccess)
	srv := httptest.NewServer(aws)
	t.Cleanup(srv.Close)

	const restoreBody = `<RestoreRequest xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Days>1</Days><GlacierJobParameters><Tier>Standard</Tier></GlacierJobParameters></RestoreRequest>`
	obj := "/" + Bucket + "/calls/a.wav"
	for _, tc := range []struct {
		name, method, path, region, body, want string
		before                                 func()
	}{
		{name: "list signed for us-east-1", method: "GET", path: "/" + Bucket + "?list-type=2", region: "us-east-1", want: "permanent_redirect.http"},
		{name: "GetObject signed for us-east-1", method: "GET", path: obj, region: "us-east-1", want: "permanent_redirect.http"},
		{name: "HeadBucket signed for us-east-1", method: "HEAD", path: "/" + Bucket, region: "us-east-1", want: "head_bucket_redirect.http"},
		{name: "HeadBucket unsigned", method: "HEAD", path: "/" + Bucket, want: "head_bucket_anonymous.http"},
		{name: "list", method: "GET", path: "/" + Bucket + "?list-type=2&prefix=calls/&max-keys=1000", region: "eu-west-1", want: "list_objects_v2_archived.http"},
		{name: "GetObject of GLACIER", method: "GET", path: obj, region: "eu-west-1", want: "get_object_invalid_object_state.http"},
		{name: "HeadObject of GLACIER", method: "HEAD", path: obj, region: "eu-west-1", want: "head_object_glacier.http"},
		{name: "RestoreObject of STANDARD", method: "POST", path: "/" + Bucket + "/calls/b.wav?restore", region: "eu-west-1", body: restoreBody, want: "restore_object_not_archived.http"},
		{name: "RestoreObject", method: "POST", path: obj + "?restore", region: "eu-west-1", body: restoreBody, want: "restore_object_accepted.http"},
		{name: "HeadObject, restore ongoing", method: "HEAD", path: obj, region: "eu-west-1", want: "head_object_restore_ongoing.http"},
		{name: "GetObject, restore ongoing", method: "GET", path: obj, region: "eu-west-1", want: "get_object_invalid_object_state.http"},
		{name: "RestoreObject again", method: "POST", path: obj + "?restore", region: "eu-west-1", body: restoreBody, want: "restore_object_in_progress.http"},
		{name: "HeadObject, restored", method: "HEAD", path: obj, region: "eu-west-1", want: "head_object_restored.http",
			before: func() { aws.FinishRestore(Bucket, "calls/a.wav") }},
		{name: "RestoreObject of a restored copy", method: "POST", path: obj + "?restore", region: "eu-west-1", body: restoreBody, want: "restore_object_again.http"},
		{name: "HeadObject, Archive Access tier", method: "HEAD", path: "/" + Bucket + "/tiered/it.wav", region: "eu-west-1", want: "head_object_archive_access.http"},
	} {
		if tc.before != nil {
			tc.before()
		}
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.region != "" {
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20121219/"+tc.region+"/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		compare(t, tc.name, tc.method, resp, got, tc.want)
	}
	if rs := aws.Restores(); len(rs) != 1 || rs[0] != (RestoreRequest{Bucket: Bucket, Key: "calls/a.wav", Days: 1, Tier: "Standard"}) {
		t.Errorf("Restores() = %+v, want the one accepted", rs)
	}
	// The restored copy was completed on 2012-12-19 for 1 day: it expires at the next midnight UTC after a day.
	req, _ := http.NewRequest("GET", srv.URL+obj, nil)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20121219/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT"`; resp.StatusCode != 200 || string(body) != "audio of calls/a.wav" || resp.Header.Get("X-Amz-Restore") != want {
		t.Errorf("GetObject of the restored copy = %d %q, x-amz-restore %q; want 200, the object, %q", resp.StatusCode, body, resp.Header.Get("X-Amz-Restore"), want)
	}
}

// s3Headers are the headers whose presence and value are compared.
var s3Headers = []string{"X-Amz-Bucket-Region", "X-Amz-Restore", "X-Amz-Storage-Class", "X-Amz-Archive-Status", "Content-Type"}

// expiryDate is the date in an x-amz-restore value.
var expiryDate = regexp.MustCompile(`expiry-date="([^"]+)"`)

// compare checks the fake's answer (resp, with body) against the recorded answer in file.
func compare(t *testing.T, name, method string, resp *http.Response, body []byte, file string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	want, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	wantBody, _ := io.ReadAll(want.Body)
	if resp.StatusCode != want.StatusCode {
		t.Errorf("%s: status %d, want %d (%s)", name, resp.StatusCode, want.StatusCode, file)
	}
	for _, h := range s3Headers {
		g, w := resp.Header.Get(h), want.Header.Get(h)
		if h == "X-Amz-Restore" {
			g, w = shape(t, g), shape(t, w)
		}
		if h == "Content-Type" && len(wantBody) == 0 {
			continue
		}
		if g != w {
			t.Errorf("%s: %s %q, want %q (%s)", name, h, g, w, file)
		}
	}
	if len(bytes.TrimSpace(wantBody)) == 0 {
		if len(body) != 0 && method != "GET" {
			t.Errorf("%s: body %q, want none (%s)", name, body, file)
		}
		return
	}
	g, w := elements(t, body), elements(t, wantBody)
	for k, v := range w.text {
		switch k[strings.LastIndex(k, "/")+1:] {
		case "RequestId", "HostId", "LastModified", "Size": // of this request, this object
			continue
		}
		if g.text[k] != v {
			t.Errorf("%s: <%s> %q, want %q (%s)", name, k, g.text[k], v, file)
		}
	}
	for _, k := range w.names {
		if !slices.Contains(g.names, k) {
			t.Errorf("%s: no <%s> element, S3 sends one (%s)", name, k, file)
		}
	}
}

// shape is an x-amz-restore value with its date replaced, once it is checked to be an HTTP date.
func shape(t *testing.T, v string) string {
	return expiryDate.ReplaceAllStringFunc(v, func(m string) string {
		if _, err := time.Parse(http.TimeFormat, expiryDate.FindStringSubmatch(m)[1]); err != nil {
			t.Errorf("x-amz-restore %q: %v", v, err)
		}
		return `expiry-date="DATE"`
	})
}

// xmlDoc is an XML body's element names, and the text of each leaf (a listing's per key: Key/Element).
type xmlDoc struct {
	names []string
	text  map[string]string
}

func elements(t *testing.T, body []byte) xmlDoc {
	t.Helper()
	d := xmlDoc{text: map[string]string{}}
	dec := xml.NewDecoder(bytes.NewReader(body))
	var path []string
	var key, chars string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return d
		}
		if err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			path, chars = append(path, e.Name.Local), ""
			if !slices.Contains(d.names, e.Name.Local) {
				d.names = append(d.names, e.Name.Local)
			}
		case xml.CharData:
			chars += string(e)
		case xml.EndElement:
			name := strings.Join(path, "/")
			if e.Name.Local == "Key" {
				key = chars
			}
			if slices.Contains(path, "Contents") && e.Name.Local != "Key" {
				name = key + "/" + e.Name.Local
			}
			if strings.TrimSpace(chars) != "" && e.Name.Local != "ETag" {
				d.text[strings.TrimPrefix(name, "Error/")] = strings.TrimSpace(chars)
			}
			path, chars = path[:len(path)-1], ""
		}
	}
}
