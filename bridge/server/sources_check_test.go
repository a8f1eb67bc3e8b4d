package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/server"
)

// TestSourcesCheck (issue 31, point 5): /readyz names a source that cannot be read, with its
// error and since when, in an advisory check: the bridge stays ready (200) while a required
// check failing still makes it unready.
func TestSourcesCheck(t *testing.T) {
	since := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	health := []bridge.SourceHealth{{Source: "inbox", Up: true}, {Source: "zoom", Since: since, Failures: 3, Error: "list recordings: 401 invalid_client"}}
	ok := server.Check{Name: "store", Run: func(context.Context) error { return nil }}
	get := func(checks ...server.Check) (int, server.Readiness) {
		rec := httptest.NewRecorder()
		server.Ready(0, checks...).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var rd server.Readiness
		if err := json.Unmarshal(rec.Body.Bytes(), &rd); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		return rec.Code, rd
	}
	code, rd := get(ok, server.SourcesCheck(func() []bridge.SourceHealth { return health }))
	if code != http.StatusOK || rd.Status != "ready" || len(rd.Checks) != 2 {
		t.Fatalf("a source down = %d %+v, want 200 ready", code, rd)
	}
	c := rd.Checks[1]
	want := "cannot be read: zoom: list recordings: 401 invalid_client (since 2026-11-02T09:00:00Z, 3 failed scan(s))"
	if c.Name != "sources" || c.OK || !c.Advisory || c.Error != want {
		t.Errorf("sources check = %+v, want not ok, advisory, error %q", c, want)
	}
	if strings.Contains(c.Error, "inbox") {
		t.Errorf("sources check names a source that can be read: %q", c.Error)
	}
	health = health[:1]
	if _, rd := get(ok, server.SourcesCheck(func() []bridge.SourceHealth { return health })); !rd.Checks[1].OK {
		t.Errorf("every source up: sources check = %+v, want ok", rd.Checks[1])
	}
	bad := server.Check{Name: "api", Run: func(context.Context) error { return context.DeadlineExceeded }}
	if code, rd := get(bad, server.SourcesCheck(func() []bridge.SourceHealth { return health })); code != http.StatusServiceUnavailable || rd.Status != "unready" {
		t.Errorf("a required check failing = %d %s, want 503 unready", code, rd.Status)
	}
}
