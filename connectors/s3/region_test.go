package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
)

// deployed is a bucket served as S3 serves it (s3test.AWS in front of gofakes3): in a region,
// with storage classes.
type deployed struct {
	*s3test.AWS
	server
}

func startDeployed(t testing.TB, region string) *deployed {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	aws := s3test.NewAWS(backend, region)
	srv := httptest.NewServer(aws)
	t.Cleanup(srv.Close)
	return &deployed{AWS: aws, server: server{backend: backend, url: srv.URL}}
}

// source is a source on the bucket, with cfg's region as given (unset: found).
func (d *deployed) source(t testing.TB, cfg s3.Config) *s3.Source {
	t.Helper()
	cfg.Bucket, cfg.Endpoint, cfg.PathStyle = bucket, d.url, true
	cfg.AccessKeyID, cfg.SecretAccessKey = "test", "test-secret"
	src, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBucketInAnotherRegion: a bucket in eu-west-1 answers calls for any other region with 301
// PermanentRedirect, which the SDK does not follow. With region unset (and the machine's AWS
// region another), the source finds the bucket's region and works; with region set wrong,
// listing fails naming the region to set, and Check says it as the fix; set right, it works.
func TestBucketInAnotherRegion(t *testing.T) {
	t.Setenv("AWS_REGION", "us-west-2") // the machine's default region, not the bucket's
	d := startDeployed(t, "eu-west-1")
	audio := bytes.Repeat([]byte("audio "), 100)
	d.put(t, "calls/a.wav", audio, nil)
	for _, tc := range []struct {
		region, wantErr string
	}{
		{"", ""},
		{"eu-west-1", ""},
		{"us-east-1", "set region: eu-west-1"},
	} {
		src := d.source(t, s3.Config{Prefix: "calls/", Region: tc.region})
		recs, _, err := src.List(context.Background(), "")
		lines, cerr := src.Check(context.Background())
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("region %q: List = %v, want an error saying %q", tc.region, err, tc.wantErr)
			}
			if _, fix, ok := connectors.SetupFix(cerr); !ok || !strings.Contains(fix, "region: eu-west-1") {
				t.Errorf("region %q: Check = %v, want a setup error whose fix names region: eu-west-1", tc.region, cerr)
			}
			continue
		}
		if err != nil || len(recs) != 1 {
			t.Fatalf("region %q: List = %d recordings, %v; want 1", tc.region, len(recs), err)
		}
		rc, err := src.Open(context.Background(), recs[0])
		if err != nil {
			t.Fatalf("region %q: Open: %v", tc.region, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, audio) {
			t.Errorf("region %q: read %d bytes, %v; want the object", tc.region, len(b), err)
		}
		if cerr != nil || !strings.Contains(strings.Join(lines, "\n"), "region eu-west-1") {
			t.Errorf("region %q: Check = %q, %v; want the bucket reachable in region eu-west-1", tc.region, lines, cerr)
		}
	}
}

// TestOpenInAnotherRegionHoldsTheJob: a recording opened with region set wrong is held
// (blocked: the job waits for the setting), never skipped.
func TestOpenInAnotherRegionHoldsTheJob(t *testing.T) {
	d := startDeployed(t, "eu-west-1")
	d.put(t, "a.wav", []byte("audio"), nil)
	recs, _ := list(t, d.source(t, s3.Config{}), "")
	_, err := d.source(t, s3.Config{Region: "ap-south-1"}).Open(context.Background(), recs[0])
	if !errors.Is(err, connectors.ErrBlocked) || !strings.Contains(err.Error(), "set region: eu-west-1") {
		t.Errorf("Open with region ap-south-1 = %v, want it blocked, naming region eu-west-1", err)
	}
}

// TestRegionUnsetOnAServerThatNamesNone: an S3-compatible server (gofakes3 as it is) answers the
// region question without x-amz-bucket-region; the source keeps the default region and works.
func TestRegionUnsetOnAServerThatNamesNone(t *testing.T) {
	s := startServer(t, s3mem.New())
	s.put(t, "a.wav", []byte("audio"), nil)
	src := (&deployed{server: *s}).source(t, s3.Config{})
	recs, _ := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("List = %d recordings, want 1", len(recs))
	}
	if lines, err := src.Check(context.Background()); err != nil || strings.Contains(strings.Join(lines, " "), "as S3 names it") {
		t.Errorf("Check = %q, %v; want it reachable in the default region", lines, err)
	}
}
