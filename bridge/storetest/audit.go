package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// entry is an audit entry of action on targets at t0+minutes.
func entry(action string, minutes int, targets ...string) bridge.AuditEntry {
	return bridge.AuditEntry{At: t0.Add(time.Duration(minutes) * time.Minute), Who: "admin session 1a2b3c4d", Action: action,
		Targets: targets, Detail: "detail of " + action}
}

// auditLog returns the latest limit entries, failing the test on an error.
func (d *db) auditLog(t *testing.T, s Stores, limit int) []bridge.AuditEntry {
	t.Helper()
	log, err := s.AuditLog(ctx, limit)
	if err != nil {
		t.Fatalf("AuditLog(%d) = %v", limit, err)
	}
	return log
}

// actions lists the entries' actions, in order.
func actions(log []bridge.AuditEntry) []string {
	out := []string{}
	for _, e := range log {
		out = append(out, e.Action)
	}
	return out
}

var auditCases = append([]testCase{
	{"an entry is kept as written", func(t *testing.T, d *db) {
		e := entry("release", 0, "job-1")
		e.At = t0.Add(123456789 * time.Nanosecond)
		e.Error = "job job-1 is done, not held"
		e.ID = 99 // ignored: the store numbers the entries
		if err := d.Audit(ctx, e); err != nil {
			t.Fatalf("Audit(%+v) = %v", e, err)
		}
		log := d.auditLog(t, d.Stores, 0)
		if len(log) != 1 {
			t.Fatalf("AuditLog(0) = %+v, want the one entry", log)
		}
		got := log[0]
		if got.ID == 0 || !got.At.Equal(e.At) || got.Who != e.Who || got.Action != e.Action || !slices.Equal(got.Targets, e.Targets) ||
			got.Detail != e.Detail || got.Error != e.Error {
			t.Errorf("AuditLog(0)[0] = %+v, want %+v with an id", got, e)
		}
	}},
	{"newest first, in the order written, limited", func(t *testing.T, d *db) {
		// Written out of At order: the log keeps the order of writing.
		for i, a := range []string{"login", "replay", "pause", "resume"} {
			if err := d.Audit(ctx, entry(a, 10-i, "x")); err != nil {
				t.Fatalf("Audit(%s) = %v", a, err)
			}
		}
		if got := actions(d.auditLog(t, d.Stores, 0)); !slices.Equal(got, []string{"resume", "pause", "replay", "login"}) {
			t.Errorf("AuditLog(0) = %v, want resume, pause, replay, login", got)
		}
		log := d.auditLog(t, d.Stores, 2)
		if got := actions(log); !slices.Equal(got, []string{"resume", "pause"}) {
			t.Errorf("AuditLog(2) = %v, want resume, pause", got)
		}
		if len(log) == 2 && log[0].ID <= log[1].ID {
			t.Errorf("ids %d, %d: a later entry has a higher id", log[0].ID, log[1].ID)
		}
		if got := d.auditLog(t, d.another(), -1); len(got) != 4 {
			t.Errorf("AuditLog(-1) on another handle = %d entries, want 4", len(got))
		}
	}},
	{"no entry yet: an empty log", func(t *testing.T, d *db) {
		if log := d.auditLog(t, d.Stores, 10); log == nil || len(log) != 0 {
			t.Errorf("AuditLog(10) of a new database = %#v, want an empty, non-nil list", log)
		}
	}},
	{"targets: none, one, many with any characters", func(t *testing.T, d *db) {
		many := []string{"d-1", "endpoint:crm", `a "quoted", comma'd id`, "ünïcode"}
		for _, targets := range [][]string{nil, {"job-1"}, many} {
			if err := d.Audit(ctx, entry("replay", 0, targets...)); err != nil {
				t.Fatalf("Audit(targets %q) = %v", targets, err)
			}
		}
		log := d.auditLog(t, d.Stores, 0)
		want := [][]string{many, {"job-1"}, {}}
		for i := range want {
			if i >= len(log) || log[i].Targets == nil || !slices.Equal(log[i].Targets, want[i]) {
				t.Errorf("AuditLog(0) targets = %v, want %q (never nil)", targetsOf(log), want)
				break
			}
		}
	}},
	{"an entry without who, action or time is refused, and nothing is written", func(t *testing.T, d *db) {
		for _, bad := range []func(*bridge.AuditEntry){
			func(e *bridge.AuditEntry) { e.Who = "" },
			func(e *bridge.AuditEntry) { e.Action = "" },
			func(e *bridge.AuditEntry) { e.At = time.Time{} },
		} {
			e := entry("pause", 0, "crm")
			bad(&e)
			if err := d.Audit(ctx, e); !errors.Is(err, bridge.ErrAuditEntry) {
				t.Errorf("Audit(%+v) = %v, want ErrAuditEntry", e, err)
			}
		}
		if log := d.auditLog(t, d.Stores, 0); len(log) != 0 {
			t.Errorf("AuditLog(0) after refused entries = %+v, want none", log)
		}
	}},
}, concurrent("concurrent writers: every entry kept, ids unique", func(t *testing.T, d *db, hs []Stores) {
	together(8, func(i int) {
		if err := hs[i%len(hs)].Audit(ctx, entry(fmt.Sprintf("action-%d", i), i, "t")); err != nil {
			t.Errorf("Audit(action-%d) = %v", i, err)
		}
	})
	log := d.auditLog(t, d.Stores, 0)
	seen := map[int64]bool{}
	for _, e := range log {
		seen[e.ID] = true
	}
	if len(log) != 8 || len(seen) != 8 {
		t.Errorf("AuditLog(0) after 8 concurrent writes = %v (%d ids), want 8 entries, 8 ids", actions(log), len(seen))
	}
})...)

// targetsOf lists the entries' targets, in order.
func targetsOf(log []bridge.AuditEntry) [][]string {
	var out [][]string
	for _, e := range log {
		out = append(out, e.Targets)
	}
	return out
}
