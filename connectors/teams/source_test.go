package teams_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

var day = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// newSource makes a source of the fake's app, with fast retries and the clock two hours after
// day; c's other fields are kept.
func newSource(t testing.TB, fake *teamstest.Server, c teams.Config) *teams.Source {
	t.Helper()
	c.TenantID, c.ClientID, c.ClientSecret = teamstest.TenantID, teamstest.ClientID, teamstest.ClientSecret
	c.GraphURL, c.LoginURL, c.MinBackoff = fake.URL, fake.URL, time.Millisecond
	if c.StartDate == "" {
		c.StartDate = "2026-11-01"
	}
	if c.Now == nil {
		c.Now = func() time.Time { return day.Add(2 * time.Hour) }
	}
	src, err := teams.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func list(t *testing.T, src connectors.Source, cursor string) ([]connectors.Recording, string) {
	t.Helper()
	recs, next, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs, next
}

func read(src connectors.Source, r connectors.Recording) ([]byte, error) {
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// fixture puts each item as a recording of organizer Sam, an hour apart.
type fixture struct {
	fake *teamstest.Server
	sam  *teamstest.User
	recs map[string]*teamstest.Recording
}

func (f *fixture) Put(t *testing.T, name string, data []byte) {
	if r, ok := f.recs[name]; ok {
		f.fake.Replace(r, r.Created.Add(time.Minute), data)
		return
	}
	f.recs[name] = f.fake.AddRecording(f.sam.ID, day.Add(time.Duration(len(f.recs))*time.Hour), data)
}
func (f *fixture) Remove(t *testing.T, name string) { f.fake.Remove(f.recs[name]) }
func (f *fixture) Settle(*testing.T)                {}

// Listed is the name a recording gets: the organizer and the creation time.
func (f *fixture) Listed(name string) string {
	return "Teams meeting Sam Lee " + f.recs[name].Created.Format("2006-01-02 1504") + ".mp4"
}

func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		fake := teamstest.Start(t)
		sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
		return newSource(t, fake, teams.Config{}), &fixture{fake: fake, sam: sam, recs: map[string]*teamstest.Recording{}}
	})
}

// TestDeltaRounds: with organizers: all, users come in pages and each organizer's recordings
// in delta pages; the cursor (one deltaLink per organizer) makes the next List return only
// what was added since; nothing before start_date is listed.
func TestDeltaRounds(t *testing.T) {
	fake := teamstest.Start(t)
	var users []*teamstest.User
	for i := range 5 {
		users = append(users, fake.AddUser("", fmt.Sprintf("User %d", i), fmt.Sprintf("u%d@acme.test", i)))
	}
	for i := range 7 {
		fake.AddRecording(users[i%2].ID, day.Add(time.Duration(i)*time.Minute), []byte("r"))
	}
	fake.AddRecording(users[0].ID, day.AddDate(0, -2, 0), []byte("too old"))
	src := newSource(t, fake, teams.Config{})
	recs, cursor := list(t, src, "")
	if len(recs) != 7 {
		t.Fatalf("first List = %d recordings, want the 7 since start_date", len(recs))
	}
	if again, _ := list(t, src, cursor); len(again) != 0 {
		t.Errorf("List from the cursor = %d recordings, want none (nothing added)", len(again))
	}
	added := fake.AddRecording(users[4].ID, day.Add(time.Hour), []byte("new"))
	recs, _ = list(t, src, cursor)
	if len(recs) != 1 || recs[0].ItemID != added.ID {
		t.Errorf("List after one recording was added = %d recordings, want that one", len(recs))
	}
	if n := fake.Count("users"); n < 3 {
		t.Errorf("users were listed in %d page requests, want them followed through @odata.nextLink (5 users, 2 a page)", n)
	}
}

// TestExpiredDeltaTokenResyncs: an expired delta token (410 Gone, or 400 syncStateNotFound)
// starts the organizer's round again from start_date; what was listed before comes again with
// the same item and version (the store takes it once), and the new cursor works.
func TestExpiredDeltaTokenResyncs(t *testing.T) {
	for _, code := range []string{"410", "syncStateNotFound"} {
		fake := teamstest.Start(t)
		sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
		fake.AddRecording(sam.ID, day, []byte("one"))
		fake.AddRecording(sam.ID, day.Add(time.Hour), []byte("two"))
		src := newSource(t, fake, teams.Config{})
		before, cursor := list(t, src, "")
		fake.AddRecording(sam.ID, day.Add(2*time.Hour), []byte("three"))
		fake.ExpireDeltaTokens(code)
		after, cursor := list(t, src, cursor)
		if len(after) != 3 || after[0].ItemID != before[0].ItemID || after[0].Version != before[0].Version {
			t.Errorf("List(%q expired) = %d recordings, want all 3 again with the same item and version", code, len(after))
		}
		if again, _ := list(t, src, cursor); len(again) != 0 {
			t.Errorf("List(%q expired) then from its cursor = %d recordings, want none", code, len(again))
		}
	}
}

// TestThrottlingHonoursRetryAfter: 429 and 503 are tried again after their Retry-After.
func TestThrottlingHonoursRetryAfter(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, day, []byte("one"))
	src := newSource(t, fake, teams.Config{})
	list(t, src, "") // the token, once
	fake.RateLimit("1")
	fake.Unavailable("1")
	start := time.Now()
	recs, _ := list(t, src, "")
	if took := time.Since(start); len(recs) != 1 || took < 2*time.Second {
		t.Errorf("List through a 429 and a 503 (Retry-After: 1 each) = %d recordings in %v, want 1 after at least 2s", len(recs), took)
	}
}

// TestForbiddenNamesWhatIsMissing: a 403 says which permission or policy is missing, in Check
// (bridge sources check, bridge doctor, with its fix) and in Open's error (the job's reason:
// not retried as transient; a missing policy holds the job, connectors.Blocked, a missing
// permission skips it).
func TestForbiddenNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name, want, fix string
		deny            func(*teamstest.Server, *teamstest.User)
	}{
		{"no User.Read.All", "needs the application permission User.Read.All", "grant the app registration the application permission User.Read.All",
			func(f *teamstest.Server, _ *teamstest.User) { f.Revoke(teamstest.PermUsers) }},
		{"no OnlineMeetingRecording.Read.All", "needs the application permission OnlineMeetingRecording.Read.All",
			"grant the app registration the application permission OnlineMeetingRecording.Read.All",
			func(f *teamstest.Server, _ *teamstest.User) { f.Revoke(teamstest.PermRecordings) }},
		{"no access policy", "needs an application access policy granted to sam@acme.test",
			"New-CsApplicationAccessPolicy -Identity bridge-recordings -AppIds " + teamstest.ClientID,
			func(f *teamstest.Server, u *teamstest.User) { f.NoPolicy(u.ID) }},
	} {
		fake := teamstest.Start(t)
		sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
		fake.AddRecording(sam.ID, day, []byte("one"))
		src := newSource(t, fake, teams.Config{})
		rec, _ := list(t, src, "")
		tc.deny(fake, sam)
		_, err := src.Check(context.Background())
		if _, fix, ok := connectors.SetupFix(err); !ok || !strings.Contains(fix, tc.fix) {
			t.Errorf("Check(%s) = %v, want a setup error whose fix says %q", tc.name, err, tc.fix)
		}
		if tc.name == "no User.Read.All" {
			continue // downloads need no user listing
		}
		_, err = read(src, rec[0])
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, connectors.ErrTransient) ||
			errors.Is(err, connectors.ErrBlocked) != (tc.name == "no access policy") {
			t.Errorf("Open(%s) = %v (blocked %v), want an error saying %q, blocked only for the policy", tc.name, err, errors.Is(err, connectors.ErrBlocked), tc.want)
		}
	}
}

// TestOrganizers: a list of e-mails is resolved (a userPrincipalName, or a mail that is no
// userPrincipalName), and a group to its members, nested groups included; with all, an
// organizer Graph refuses is skipped with a warning while the others are read.
func TestOrganizers(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	kim := fake.AddUser("", "Kim Park", "kim@acme.test")
	fake.Edit(func() { kim.UserPrincipalName = "kim.park@acme.onmicrosoft.com" })
	other := fake.AddUser("", "Other", "other@acme.test")
	for _, u := range []*teamstest.User{sam, kim, other} {
		fake.AddRecording(u.ID, day, []byte(u.DisplayName))
	}
	recs, _ := list(t, newSource(t, fake, teams.Config{Organizers: []string{"sam@acme.test", "kim@acme.test"}}), "")
	owners := map[string]string{}
	for _, r := range recs {
		owners[r.Owner.Email] = r.Owner.ID
	}
	if len(recs) != 2 || owners["sam@acme.test"] != sam.ID || owners["kim@acme.test"] != kim.ID {
		t.Errorf("organizers [sam, kim by mail] listed %v, want their two recordings", owners)
	}
	nested := fake.AddGroup("leads@acme.test", kim.ID)
	team := fake.AddGroup("team@acme.test", sam.ID, nested.ID)
	for _, entry := range []string{"group:team@acme.test", "group:" + team.ID} {
		recs, _ := list(t, newSource(t, fake, teams.Config{Organizers: []string{entry, "sam@acme.test"}}), "")
		if len(recs) != 2 {
			t.Errorf("organizers [%s, sam] listed %d recordings, want Sam's and Kim's (a nested group's member)", entry, len(recs))
		}
	}
	fake.Revoke(teamstest.PermGroups)
	_, _, err := newSource(t, fake, teams.Config{Organizers: []string{"group:team@acme.test"}}).List(context.Background(), "")
	if err == nil || !strings.Contains(err.Error(), "needs the application permission GroupMember.Read.All") {
		t.Errorf("List of a group without GroupMember.Read.All = %v, want an error naming it", err)
	}
	fake.NoPolicy(other.ID)
	var logs bytes.Buffer
	src := newSource(t, fake, teams.Config{})
	src.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	if recs, _ := list(t, src, ""); len(recs) != 2 {
		t.Errorf("organizers: all with one refused = %d recordings, want the other two", len(recs))
	}
	if !strings.Contains(logs.String(), "1 of 3 organizers skipped") || !strings.Contains(logs.String(), "other@acme.test") {
		t.Errorf("log = %q, want a warning naming the organizer skipped", logs.String())
	}
}

// TestRecording: what a recording says: a long id hashed into the external id (kept whole in
// the metadata), the organizer as the owner (provider teams), the meeting in the metadata.
func TestRecording(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	rec := fake.AddRecording(sam.ID, day, []byte("one"))
	recs, _ := list(t, newSource(t, fake, teams.Config{}), "")
	r := recs[0]
	if len(rec.ID) <= 128 {
		t.Fatalf("the fake's recording id has %d characters; want a real one's length (about 290)", len(rec.ID))
	}
	o := r.Owner
	if !strings.HasPrefix(r.SourceExternalID, "teams:") || len(r.SourceExternalID) != 6+64 || r.Metadata["teams_recording_id"] != rec.ID {
		t.Errorf("external id %q, metadata teams_recording_id %q; want teams:<sha-256> and the full id", r.SourceExternalID, r.Metadata["teams_recording_id"])
	}
	if o == nil || o.Provider != "teams" || o.ID != sam.ID || o.Email != "sam@acme.test" || o.Name != "Sam Lee" {
		t.Errorf("owner = %+v, want teams:%s sam@acme.test Sam Lee", o, sam.ID)
	}
	for k, want := range map[string]string{"teams_meeting_id": rec.MeetingID, "teams_organizer": "sam@acme.test",
		"teams_start": "2026-11-20T09:00:00Z", "teams_end": "2026-11-20T09:30:00Z", "teams_content_correlation_id": rec.ContentCorrelationID} {
		if r.Metadata[k] != want {
			t.Errorf("metadata %s = %q, want %q", k, r.Metadata[k], want)
		}
	}
	if r.Name != "Teams meeting Sam Lee 2026-11-20 0900.mp4" || r.Version != "2026-11-20T09:00:00Z" {
		t.Errorf("name %q, version %q", r.Name, r.Version)
	}
}
