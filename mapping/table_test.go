package mapping

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// TestMapFileReloads: an edited map file is read again by Reload, without a new Mapper; an
// unchanged file is not, a broken one keeps the entries read before and is reported once, and
// the inline map stays under the file's entries.
func TestMapFileReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.csv")
	write := func(body string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	write("external user,member\nu1,email:one@acme.test\n", old)
	m, err := New("inbox", "localdir", "i", Rules{Resolve: []string{RuleMap}, MapFile: path, Map: map[string]string{"u9": "email:nine@acme.test"}})
	if err != nil {
		t.Fatal(err)
	}
	author := func(id string) string {
		j := job("a.wav")
		j.Owner = &connectors.Owner{Provider: "sso", ID: id}
		res, err := m.Map(context.Background(), j)
		if errors.Is(err, ErrUnmapped) {
			return "held"
		}
		if err != nil {
			t.Fatalf("Map(%s) = %v", id, err)
		}
		return res.Author
	}
	tests := []struct {
		name        string
		body        string // "" leaves the file as it is
		mod         time.Time
		wantChanged bool
		wantErr     string
		want        map[string]string // owner id → author, or held
	}{
		{"untouched", "", old, false, "", map[string]string{"u1": "email:one@acme.test", "u2": "held", "u9": "email:nine@acme.test"}},
		{"entry added", "u1,email:one@acme.test\nu2,email:two@acme.test\n", old.Add(time.Minute), true, "",
			map[string]string{"u1": "email:one@acme.test", "u2": "email:two@acme.test", "u9": "email:nine@acme.test"}},
		{"same bytes, new time", "u1,email:one@acme.test\nu2,email:two@acme.test\n", old.Add(2 * time.Minute), false, "",
			map[string]string{"u2": "email:two@acme.test"}},
		{"same size and time, other bytes", "u1,email:one@acme.test\nu2,email:owt@acme.test\n", old.Add(2 * time.Minute), true, "",
			map[string]string{"u2": "email:owt@acme.test"}},
		{"entry removed, inline one overridden", "u9,email:other@acme.test\n", old.Add(3 * time.Minute), true, "",
			map[string]string{"u1": "held", "u2": "held", "u9": "email:other@acme.test"}},
		{"broken line keeps the entries", "u1,email:one@acme.test\nu3,sam\n", old.Add(4 * time.Minute), false, "line 2",
			map[string]string{"u1": "held", "u9": "email:other@acme.test"}},
		{"broken file reported once", "", old.Add(4 * time.Minute), false, "", map[string]string{"u9": "email:other@acme.test"}},
		{"fixed", "u3,email:three@acme.test\n", old.Add(5 * time.Minute), true, "",
			map[string]string{"u3": "email:three@acme.test", "u9": "email:nine@acme.test"}},
	}
	for _, tc := range tests {
		if tc.body != "" {
			write(tc.body, tc.mod)
		}
		changed, err := m.Reload()
		if changed != tc.wantChanged || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: Reload = %v, %v; want %v, error %q", tc.name, changed, err, tc.wantChanged, tc.wantErr)
		}
		for id, want := range tc.want {
			if got := author(id); got != want {
				t.Errorf("%s: %s maps to %s, want %s", tc.name, id, got, want)
			}
		}
	}
}

// TestMapFileGoneIsReportedOnce: a map file removed while the bridge runs keeps its entries and
// is one error, not one per look.
func TestMapFileGoneIsReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.csv")
	os.WriteFile(path, []byte("u1,email:one@acme.test\n"), 0o644)
	m, err := New("inbox", "localdir", "i", Rules{Resolve: []string{RuleMap}, MapFile: path})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if _, err := m.Reload(); err == nil || !strings.Contains(err.Error(), "users.csv") {
		t.Errorf("first Reload of a removed file = %v, want an error naming it", err)
	}
	if changed, err := m.Reload(); changed || err != nil {
		t.Errorf("second Reload = %v, %v; want quiet", changed, err)
	}
	if got := m.Table()["u1"]; got != "email:one@acme.test" {
		t.Errorf("after the file went, u1 → %q; want the entry kept", got)
	}
}
