package zoom_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// TestAccountWideSweep: with users: all, the sweep lists the account's recordings
// (GET /accounts/me/recordings), one call a window whatever the number of users, and each
// owner has the host's e-mail.
func TestAccountWideSweep(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddUser("u2", "gone@acme.test", "inactive")
	fake.AddMeeting("u1", "", "by Sam", day, map[string][]byte{"M4A": []byte("a")})
	fake.AddMeeting("u2", "", "by a deactivated user", day, map[string][]byte{"M4A": []byte("b")})
	src := newSource(t, fake, zoom.Config{})
	recs, _, err := src.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, r := range recs {
		owners[r.Fields["topic"]] = r.Owner.ID + "/" + r.Owner.Email
	}
	if owners["by Sam"] != "u1/sam@acme.test" || owners["by a deactivated user"] != "u2/gone@acme.test" || len(owners) != 2 {
		t.Errorf("owners = %v; want both meetings, each with the host's id and e-mail", owners)
	}
	if fake.Calls["account recordings"] != 1 || fake.Calls["recordings"] != 0 {
		t.Errorf("calls = %v; want one account-wide listing for the one window, none per user", fake.Calls)
	}
}

// TestPerUserSweepFillsTheEmail: the per-user listing has no host_email; the owner's e-mail is
// the user's, whether users names the user by id or by e-mail.
func TestPerUserSweepFillsTheEmail(t *testing.T) {
	for _, entry := range []string{"u1", "Sam@Acme.test"} {
		fake := zoomtest.Start(t)
		fake.AddUser("u1", "sam@acme.test", "active")
		fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": []byte("a")})
		r := one(t, newSource(t, fake, zoom.Config{Users: []string{entry}}), "standup")
		if r.Owner == nil || r.Owner.ID != "u1" || r.Owner.Email != "sam@acme.test" || r.Metadata["zoom_host"] != "sam@acme.test" {
			t.Errorf("users: [%s]: owner %+v, zoom_host %q; want u1 with sam@acme.test", entry, r.Owner, r.Metadata["zoom_host"])
		}
	}
}

// TestSweepWithoutAccountScopeGoesUserByUser: an app without the scope of the account-wide
// listing is swept user by user, with a warning: users of every status across pages (301 of
// them) and 28-day windows.
func TestSweepWithoutAccountScopeGoesUserByUser(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.SetScopes("user:read:list_users:admin cloud_recording:read:list_user_recordings:admin")
	for i := range 300 {
		fake.AddUser(fmt.Sprintf("filler-%03d", i), fmt.Sprintf("f%03d@acme.test", i), "active")
	}
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddUser("u2", "gone@acme.test", "inactive")
	fake.AddUser("u3", "new@acme.test", "pending")
	fake.AddMeeting("u1", "", "Recent", day, map[string][]byte{"M4A": []byte("recent")})
	fake.AddMeeting("u2", "", "Old, by a deactivated user", day.AddDate(0, -2, -10), map[string][]byte{"MP4": []byte("old")})
	fake.AddMeeting("u3", "", "Pending user", day.AddDate(0, -1, 0), map[string][]byte{"M4A": []byte("p")})
	fake.AddMeeting("u1", "", "Too old", day.AddDate(0, -5, 0), map[string][]byte{"M4A": []byte("x")})
	src := newSource(t, fake, zoom.Config{})
	var logs bytes.Buffer
	src.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	var last [2]int
	recs, err := src.Backfill(context.Background(), day.AddDate(0, -3, 0), func(done, total int) { last = [2]int{done, total} })
	if err != nil {
		t.Fatal(err)
	}
	emails := map[string]string{}
	for _, r := range recs {
		emails[r.Fields["topic"]] = r.Owner.Email
	}
	if len(recs) != 3 || emails["Old, by a deactivated user"] != "gone@acme.test" || emails["Pending user"] != "new@acme.test" {
		t.Errorf("backfill found %v, want the three meetings of the last three months with their hosts' e-mails", emails)
	}
	if last[0] != last[1] || last[1] != 303*4 {
		t.Errorf("progress ended at %d/%d, want 1212/1212 (303 users × 4 windows of 28 days)", last[0], last[1])
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cloud_recording:read:list_account_recordings:admin") {
		t.Errorf("log = %q; want a warning naming the account-wide listing's scope", logs.String())
	}
}
