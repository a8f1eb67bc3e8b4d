package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/server"
)

// run runs one check and returns its error.
func run(c server.Check) error { return c.Run(context.Background()) }

func TestStoreCheck(t *testing.T) {
	if err := run(server.StoreCheck(func(context.Context) error { return nil })); err != nil {
		t.Errorf("a store that answers: %v, want ready", err)
	}
	err := run(server.StoreCheck(func(context.Context) error { return errors.New("database is locked") }))
	if err == nil || !strings.Contains(err.Error(), "store unreachable: database is locked") {
		t.Errorf("a store that fails: %v, want its error", err)
	}
}

func TestSchemaCheck(t *testing.T) {
	at := func(v int, err error) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { return v, err }
	}
	if err := run(server.SchemaCheck(at(8, nil), 8)); err != nil {
		t.Errorf("current schema: %v, want ready", err)
	}
	for _, tc := range []struct {
		v    int
		err  error
		want string
	}{
		{7, nil, "schema version 7, this bridge needs 8: run bridge migrate"},
		{9, nil, "schema version 9 is newer than this bridge knows (8)"},
		{0, errors.New("no such table"), "schema version unreadable: no such table"},
	} {
		if err := run(server.SchemaCheck(at(tc.v, tc.err), 8)); err == nil || err.Error() != tc.want {
			t.Errorf("schema %d, %v: %v, want %q", tc.v, tc.err, err, tc.want)
		}
	}
}

func TestAPICheck(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	answered := func(at time.Time) func() time.Time { return func() time.Time { return at } }
	if err := run(server.APICheck(answered(now.Add(-4*time.Second)), 15*time.Second, clock)); err != nil {
		t.Errorf("an answer 4s ago: %v, want ready", err)
	}
	err := run(server.APICheck(answered(now.Add(-2*time.Minute)), 15*time.Second, clock))
	if err == nil || !strings.Contains(err.Error(), "no answer for 2m0s") {
		t.Errorf("an answer 2m ago: %v, want no answer for 2m0s", err)
	}
	err = run(server.APICheck(answered(time.Time{}), 15*time.Second, clock))
	if err == nil || !strings.Contains(err.Error(), "has not answered") {
		t.Errorf("never answered: %v, want an error", err)
	}
}

func TestBusCheck(t *testing.T) {
	if err := run(server.BusCheck(func(context.Context) error { return nil })); err != nil {
		t.Errorf("a bus consumed: %v, want ready", err)
	}
	if err := run(server.BusCheck(func(context.Context) error { return errors.New("router stopped") })); err == nil {
		t.Error("a bus not consumed: ready, want its error")
	}
}

// TestReadyz: 200 and "ready" when every check passes; 503 and "unready" naming each failing
// check with its error when one fails, and a check that hangs fails at the timeout.
func TestReadyz(t *testing.T) {
	ok := server.Check{Name: "store", Run: func(context.Context) error { return nil }}
	bad := server.Check{Name: "api", Run: func(context.Context) error { return errors.New("no answer for 2m0s") }}
	hangs := server.Check{Name: "bus", Run: func(ctx context.Context) error { <-ctx.Done(); time.Sleep(10 * time.Millisecond); return nil }}
	get := func(h http.Handler) (int, server.Readiness) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var rd server.Readiness
		if err := json.Unmarshal(rec.Body.Bytes(), &rd); err != nil {
			t.Fatalf("not JSON: %v: %s", err, rec.Body.String())
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		return rec.Code, rd
	}
	if code, rd := get(server.Ready(0, ok)); code != 200 || rd.Status != "ready" || len(rd.Checks) != 1 || !rd.Checks[0].OK {
		t.Errorf("all passing = %d %+v, want 200 ready", code, rd)
	}
	code, rd := get(server.Ready(50*time.Millisecond, ok, bad, hangs))
	want := []server.CheckResult{{Name: "store", OK: true}, {Name: "api", Error: "no answer for 2m0s"}, {Name: "bus", Error: "no answer within 50ms"}}
	if code != http.StatusServiceUnavailable || rd.Status != "unready" || len(rd.Checks) != 3 {
		t.Fatalf("failing = %d %+v, want 503 unready with 3 checks", code, rd)
	}
	for i, w := range want {
		if rd.Checks[i] != w {
			t.Errorf("check %d = %+v, want %+v", i, rd.Checks[i], w)
		}
	}
}

// TestHealthzAndReadyzOnTheServer: /healthz answers 200 at once, /readyz as mounted.
func TestHealthzAndReadyzOnTheServer(t *testing.T) {
	srv := server.New("127.0.0.1:0", nil)
	srv.Handle("GET /readyz", server.Ready(0, server.StoreCheck(func(context.Context) error { return errors.New("down") })))
	at, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		resp, err := http.Get("http://" + at + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
