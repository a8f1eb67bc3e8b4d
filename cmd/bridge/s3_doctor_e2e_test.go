package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
)

// TestDoctorS3SetupProblems: bridge doctor names the fix of an S3 source's setup problems, on a
// bucket served as S3 serves it (s3test.AWS) in eu-west-1: region set to another region (fail:
// set region: eu-west-1), archived objects with restore off (warn: how many, restore: true).
func TestDoctorS3SetupProblems(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket(s3test.Bucket); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"calls/a.wav", "calls/b.wav", "calls/c.wav"} {
		if _, err := backend.PutObject(s3test.Bucket, k, nil, strings.NewReader("audio"), 5, nil); err != nil {
			t.Fatal(err)
		}
	}
	aws := s3test.NewAWS(backend, "eu-west-1")
	aws.Transition(s3test.Bucket, "calls/a.wav", s3test.Glacier)
	aws.Transition(s3test.Bucket, "calls/b.wav", s3test.DeepArchive)
	srv := httptest.NewServer(aws)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	secret := filepath.Join(dir, "s3.secret")
	os.WriteFile(secret, []byte("test-secret\n"), 0o600)
	config := func(extra string) string {
		return fmt.Sprintf(`store: {dsn: %q}
sources:
  - {name: bucket, type: s3, bucket: recordings, prefix: calls/, endpoint: %q, path_style: true,
     access_key_id: test, secret_access_key_file: %q, author: "email:sam@acme.test"%s}
`, filepath.Join(dir, "bridge.db"), srv.URL, secret, extra)
	}

	r, _ := doctorJSON(t, dir, config(", region: us-east-1"))
	t.Logf("%+v", r.Items)
	if c := r.find(t, checkFail, "source bucket"); !strings.Contains(c.Detail, "eu-west-1") || !strings.Contains(c.Fix, "set region: eu-west-1") {
		t.Errorf("doctor with region us-east-1: %+v, want the fix set region: eu-west-1", c)
	}

	r, _ = doctorJSON(t, dir, config(""))
	t.Logf("%+v", r.Items)
	r.find(t, checkOK, "source bucket")
	if c := r.find(t, checkWarn, "source bucket"); !strings.HasPrefix(c.Detail, "2 of the first 3 objects") || !strings.Contains(c.Fix, "restore: true") {
		t.Errorf("doctor with archived objects: %+v, want a warning: 2 of the first 3 archived, fix restore: true", c)
	}
}
