package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
	"github.com/transcript-bridge/bridge/connectors/s3"
)

const bucket = "recordings"

// server is an in-process S3 server (gofakes3) on loopback, with one bucket.
type server struct {
	backend gofakes3.Backend
	url     string
}

func startServer(t testing.TB, backend gofakes3.Backend) *server {
	t.Helper()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return &server{backend: backend, url: srv.URL}
}

func (s *server) put(t testing.TB, key string, data []byte, meta map[string]string) {
	t.Helper()
	if _, err := s.backend.PutObject(bucket, key, meta, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

func (s *server) source(t testing.TB, cfg s3.Config) *s3.Source {
	t.Helper()
	cfg.Bucket, cfg.Endpoint, cfg.PathStyle, cfg.Region = bucket, s.url, true, "us-east-1"
	cfg.AccessKeyID, cfg.SecretAccessKey = "test", "test-secret"
	src, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

type fixture struct {
	s      *server
	prefix string
}

func (f fixture) Put(t *testing.T, name string, data []byte) { f.s.put(t, f.prefix+name, data, nil) }
func (f fixture) Remove(t *testing.T, name string) {
	if _, err := f.s.backend.DeleteObject(bucket, f.prefix+name); err != nil {
		t.Fatal(err)
	}
}
func (f fixture) Settle(*testing.T) {}

func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		s := startServer(t, s3mem.New())
		s.put(t, "elsewhere/other.wav", []byte("outside the prefix"), nil)
		return s.source(t, s3.Config{Prefix: "calls/"}), fixture{s: s, prefix: "calls/"}
	})
}

func list(t *testing.T, src *s3.Source, cursor string) ([]connectors.Recording, string) {
	t.Helper()
	recs, next, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs, next
}

// TestTenThousandObjectsAndALateKey lists 10,000 objects (ten pages), then nothing new, then
// a key that sorts before all of them and arrives late: a StartAfter cursor would skip it.
func TestTenThousandObjectsAndALateKey(t *testing.T) {
	s := startServer(t, s3mem.New())
	for i := range 10000 {
		s.put(t, fmt.Sprintf("calls/m-%05d.wav", i), []byte{byte(i), byte(i >> 8)}, nil)
	}
	src := s.source(t, s3.Config{Prefix: "calls/"})
	recs, cursor := list(t, src, "")
	if len(recs) != 10000 {
		t.Fatalf("first listing = %d recordings, want 10000", len(recs))
	}
	t.Logf("cursor for 10,000 keys: %d bytes", len(cursor))
	if again, _ := list(t, src, cursor); len(again) != 0 {
		t.Errorf("second listing = %d recordings, want 0", len(again))
	}
	s.put(t, "calls/a-late.wav", []byte("late"), nil)
	s.put(t, "calls/m-00042.wav", []byte("replaced"), nil)
	recs, _ = list(t, src, cursor)
	got := map[string]bool{}
	for _, r := range recs {
		got[r.ItemID] = true
	}
	if len(recs) != 2 || !got["calls/a-late.wav"] || !got["calls/m-00042.wav"] {
		t.Errorf("after a late key and a replacement, listed %v; want calls/a-late.wav and calls/m-00042.wav", got)
	}
}

func TestFiltersOwnerAndFields(t *testing.T) {
	s := startServer(t, s3mem.New())
	s.put(t, "calls/sam@acme.test/a.m4a", []byte("audio a"), map[string]string{"X-Amz-Meta-Owner-Email": "Sam@Acme.test", "X-Amz-Meta-Team": "sales"})
	s.put(t, "calls/sam@acme.test/notes.txt", []byte("not audio"), nil)
	s.put(t, "calls/kim@acme.test/b.mp4", bytes.Repeat([]byte("v"), 100), nil)
	s.put(t, "calls/folder/", nil, nil)

	src := s.source(t, s3.Config{Prefix: "calls/", Include: []string{"*.m4a", "*.mp4"}, MaxSize: 50, OwnerFrom: "meta:owner-email"})
	recs, _ := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("listed %d recordings, want 1 (a.m4a; notes.txt excluded, b.mp4 too large, folder marker)", len(recs))
	}
	r := recs[0]
	if r.Owner == nil || r.Owner.Email != "Sam@Acme.test" || r.Fields["team"] != "sales" {
		t.Errorf("owner = %+v, fields = %v; want Sam@Acme.test from x-amz-meta-owner-email and team=sales", r.Owner, r.Fields)
	}
	if want := "s3:recordings/calls/sam@acme.test/a.m4a@" + r.Version; r.SourceExternalID != want || r.Size != 7 || r.Name != "a.m4a" {
		t.Errorf("recording = %+v, want external id %q, size 7, name a.m4a", r, want)
	}

	byKey := s.source(t, s3.Config{Prefix: "calls/", OwnerFrom: `key:^calls/([^/]+)/`, Exclude: []string{"*.txt"}})
	recs, _ = list(t, byKey, "")
	for _, r := range recs {
		if r.Owner == nil || r.Owner.Email == "" || r.Owner.Provider != "s3" {
			t.Errorf("%s: owner = %+v, want the folder's e-mail", r.ItemID, r.Owner)
		}
	}
}

func TestBadOptionsNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{}, "option bucket: required"},
		{map[string]any{"bucket": "b", "owner_from": "header:x"}, "option owner_from"},
		{map[string]any{"bucket": "b", "owner_from": "key:calls/.*"}, "no (group)"},
		{map[string]any{"bucket": "b", "include": []any{"[a-"}}, "option include"},
		{map[string]any{"bucket": "b", "buckets": "x"}, `unknown option "buckets"`},
		{map[string]any{"bucket": "b", "access_key_id": "AKIA"}, "secret_access_key_file"},
		{map[string]any{"bucket": "b", "head_concurrency": 0}, "option head_concurrency"},
	} {
		_, err := connectors.New("s3", "x", tc.opts)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("New(%v) = %v, want an error mentioning %q", tc.opts, err, tc.want)
		}
	}
}

// TestOpenStreamsWithFlatMemory reads a 1 GiB object through Open and reports the bytes
// allocated (client and in-process server together): far below the object's size.
func TestOpenStreamsWithFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1 GiB")
	}
	const size = 1 << 30
	s := startServer(t, s3mem.New())
	src := s.source(t, s3.Config{})
	rec := putLarge(t, s, src, size)
	alloc := allocated(t, src, rec, size)
	t.Logf("%d MiB streamed with %.1f MiB allocated", size>>20, float64(alloc)/(1<<20))
	if alloc > size/8 {
		t.Errorf("reading %d MiB allocated %d MiB: the body is being buffered", size>>20, alloc>>20)
	}
}

// putLarge stores a size-byte object (in the server's memory) and returns its recording.
func putLarge(t testing.TB, s *server, src *s3.Source, size int64) connectors.Recording {
	t.Helper()
	if _, err := s.backend.PutObject(bucket, "big.wav", nil, io.LimitReader(zeros{}, size), size, nil); err != nil {
		t.Fatal(err)
	}
	recs, _, err := src.List(context.Background(), "")
	if err != nil || len(recs) != 1 || recs[0].Size != size {
		t.Fatalf("List = %v, %v; want the big object", recs, err)
	}
	return recs[0]
}

// allocated opens rec, reads it to the end and returns the bytes allocated meanwhile.
func allocated(t testing.TB, src *s3.Source, rec connectors.Recording, size int64) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rc, err := src.Open(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || n != size {
		t.Fatalf("read %d bytes, %v; want %d", n, err, size)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestDeleteAfterOnlyOnceDone: delete_after removes an object whose job is done, keeps one
// whose job failed, and keeps one replaced since it was listed.
func TestDeleteAfterOnlyOnceDone(t *testing.T) {
	s := startServer(t, s3mem.New())
	for _, k := range []string{"done.wav", "failed.wav", "replaced.wav"} {
		s.put(t, k, []byte("audio of "+k), nil)
	}
	src := s.source(t, s3.Config{DeleteAfter: true})
	recs, _ := list(t, src, "")
	s.put(t, "replaced.wav", []byte("a newer take"), nil)
	outcome := map[string]connectors.Outcome{"done.wav": connectors.OutcomeDone, "failed.wav": connectors.OutcomeFailed, "replaced.wav": connectors.OutcomeDone}
	for _, r := range recs {
		if err := src.Finish(context.Background(), r, outcome[r.ItemID]); err != nil {
			t.Fatalf("Finish(%s): %v", r.ItemID, err)
		}
	}
	left, _ := list(t, src, "")
	var keys []string
	for _, r := range left {
		keys = append(keys, r.ItemID)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "failed.wav,replaced.wav" {
		t.Errorf("objects left = %s, want failed.wav,replaced.wav", got)
	}
}

// TestOpenFailuresAreClassified: server errors, throttling and a body cut short are transient
// (the bridge tries again later); a refusal about the account (402, a 403 naming billing,
// AccountProblem) holds the job (blocked); an object gone (404), replaced (412 on If-Match) or
// refused (403 AccessDenied) is permanent.
func TestOpenFailuresAreClassified(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "1") // the SDK's own retries are not under test
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	var fault atomic.Value // the next GET's answer: "500", "slowdown", "403", "402", "billing", "account", "cut" or ""
	fault.Store("")
	s3srv := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := fault.Swap("").(string)
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".wav") || f == "" {
			s3srv.ServeHTTP(w, r)
			return
		}
		s3Error := func(status int, code string) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(status)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>R1</RequestId></Error>`, code, code)
		}
		switch f {
		case "500":
			s3Error(http.StatusInternalServerError, "InternalError")
		case "slowdown":
			w.Header().Set("Retry-After", "7")
			s3Error(http.StatusServiceUnavailable, "SlowDown")
		case "403":
			s3Error(http.StatusForbidden, "AccessDenied")
		case "402": // an S3-compatible service asking for payment
			s3Error(http.StatusPaymentRequired, "PaymentRequired")
		case "billing": // an S3-compatible service whose account's billing lapsed
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Account suspended: billing information is missing</Message><RequestId>R1</RequestId></Error>`)
		case "account": // https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccountProblem</Code><Message>There is a problem with your AWS account that prevents the operation from completing successfully.</Message><RequestId>R1</RequestId></Error>`)
		case "cut": // the connection drops half way through the body
			rec := httptest.NewRecorder()
			s3srv.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
		}
	}))
	t.Cleanup(srv.Close)
	s := &server{backend: backend, url: srv.URL}
	s.put(t, "a.wav", bytes.Repeat([]byte("audio "), 1000), nil)
	src := s.source(t, s3.Config{})
	recs, _ := list(t, src, "")
	open := func() error {
		rc, err := src.Open(context.Background(), recs[0])
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		return err
	}
	for _, tc := range []struct {
		name       string
		setup      func()
		transient  bool
		retryAfter time.Duration
		blocked    bool
	}{
		{"500 InternalError", func() { fault.Store("500") }, true, 0, false},
		{"503 SlowDown", func() { fault.Store("slowdown") }, true, 7 * time.Second, false},
		{"a body cut short", func() { fault.Store("cut") }, true, 0, false},
		{"403 AccessDenied", func() { fault.Store("403") }, false, 0, false},
		{"402 Payment Required", func() { fault.Store("402") }, false, 0, true},
		{"403 naming billing", func() { fault.Store("billing") }, false, 0, true},
		{"403 AccountProblem", func() { fault.Store("account") }, false, 0, true},
		{"412 (replaced since listed)", func() { s.put(t, "a.wav", []byte("another take"), nil) }, false, 0, false},
		{"404 (deleted)", func() { backend.DeleteObject(bucket, "a.wav") }, false, 0, false},
	} {
		tc.setup()
		err := open()
		if err == nil || errors.Is(err, connectors.ErrTransient) != tc.transient || connectors.TransientWait(err) != tc.retryAfter ||
			errors.Is(err, connectors.ErrBlocked) != tc.blocked {
			t.Errorf("Open after %s = %v (transient %v, retry after %v, blocked %v), want an error, transient %v, retry after %v, blocked %v",
				tc.name, err, errors.Is(err, connectors.ErrTransient), connectors.TransientWait(err), errors.Is(err, connectors.ErrBlocked),
				tc.transient, tc.retryAfter, tc.blocked)
		}
	}
}
