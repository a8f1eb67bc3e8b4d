package bridge_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
)

// TestS3ArchivedObjectIsSkippedWithTheReason: an S3 object in GLACIER, which S3 refuses to read
// until restored, is recorded as a skipped job at discovery, with the connector's reason (restore:
// true), one recording.skipped event, and no upload; a readable one beside it is transcribed.
func TestS3ArchivedObjectIsSkippedWithTheReason(t *testing.T) {
	e := newEnv(t, nil)
	backend := s3mem.New()
	if err := backend.CreateBucket(s3test.Bucket); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"calls/archived.wav", "calls/hot.wav"} {
		data := wav(5, 3)
		if _, err := backend.PutObject(s3test.Bucket, k, nil, bytes.NewReader(data), int64(len(data)), nil); err != nil {
			t.Fatal(err)
		}
	}
	aws := s3test.NewAWS(backend, "eu-west-1")
	aws.Transition(s3test.Bucket, "calls/archived.wav", s3test.Glacier)
	srv := httptest.NewServer(aws)
	t.Cleanup(srv.Close)
	src, err := s3.New(context.Background(), s3.Config{Bucket: s3test.Bucket, Prefix: "calls/", Endpoint: srv.URL, PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test-secret"})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	if n, err := e.p.Scan(context.Background(), "inbox"); err != nil || n != 2 {
		t.Fatalf("Scan = %d, %v; want two new jobs", n, err)
	}
	e.run(t)
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		switch j.ItemID {
		case "calls/archived.wav":
			if j.State != bridge.StateSkipped || !strings.Contains(j.Reason, "GLACIER") || !strings.Contains(j.Reason, "restore: true") {
				t.Errorf("archived.wav: %s (%q), want skipped, the reason naming GLACIER and restore: true", j.State, j.Reason)
			}
		case "calls/hot.wav":
			if j.State != bridge.StateDone {
				t.Errorf("hot.wav: %s (%q), want done", j.State, j.Reason)
			}
		}
	}
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1 (hot.wav)", accepted)
	}
	if n := e.events(t)[bridge.EventSkipped]; n != 1 {
		t.Errorf("%d %s events, want 1", n, bridge.EventSkipped)
	}
}
