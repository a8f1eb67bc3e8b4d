package teams_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// TestAdHocCalls (issue 29, point 3): with ad_hoc_calls, the recordings of the ad hoc calls an
// organizer starts (which the meetings' getAllRecordings never lists) are listed beside the
// meetings' and downloaded from /users/{id}/adhocCalls/{callId}/recordings/{id}/content; the
// next sweep lists what was added since (the last day again, the same item and version);
// without the option they are not listed.
func TestAdHocCalls(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, day, []byte("meeting"))
	call := fake.AddAdhocRecording(sam.ID, day.Add(time.Hour), []byte("a call"))
	fake.AddAdhocRecording(sam.ID, day.AddDate(0, -2, 0), []byte("before start_date"))
	if recs, _ := list(t, newSource(t, fake, teams.Config{}), ""); len(recs) != 1 {
		t.Errorf("without ad_hoc_calls, List = %d recordings, want the meeting's only", len(recs))
	}
	src := newSource(t, fake, teams.Config{AdHocCalls: true})
	recs, cursor := list(t, src, "")
	var got *connectors.Recording
	for i := range recs {
		if recs[i].ItemID == call.ID {
			got = &recs[i]
		}
	}
	if len(recs) != 2 || got == nil {
		t.Fatalf("with ad_hoc_calls, List = %d recordings, want the meeting's and the call's", len(recs))
	}
	if got.Name != "Teams call Sam Lee 2026-11-20 1000.mp4" || got.Metadata["teams_call_id"] != call.CallID || got.Owner.ID != sam.ID {
		t.Errorf("the call's recording = name %q, metadata %v, owner %+v", got.Name, got.Metadata, got.Owner)
	}
	if b, err := read(src, *got); err != nil || string(b) != "a call" {
		t.Errorf("Open(the call's recording) = %q, %v; want its content", b, err)
	}
	later := fake.AddAdhocRecording(sam.ID, day.Add(90*time.Minute), []byte("another call"))
	again, _ := list(t, src, cursor)
	ids := map[string]string{}
	for _, r := range again {
		ids[r.ItemID] = r.Version
	}
	if len(again) != 2 || ids[later.ID] == "" || ids[call.ID] != got.Version {
		t.Errorf("List from the cursor = %d recordings, want the new call's and the last day's again (same version)", len(again))
	}
}

// TestAdHocCallsRefused: without CallRecordings.Read.All the meetings are still synced, the
// sweep warns, and Check says what to grant.
func TestAdHocCallsRefused(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddRecording(sam.ID, day, []byte("meeting"))
	fake.AddAdhocRecording(sam.ID, day.Add(time.Hour), []byte("a call"))
	fake.Revoke(teamstest.PermCallRecordings)
	src := newSource(t, fake, teams.Config{AdHocCalls: true})
	if recs, _ := list(t, src, ""); len(recs) != 1 {
		t.Errorf("List without CallRecordings.Read.All = %d recordings, want the meeting's", len(recs))
	}
	lines, err := src.Check(context.Background())
	var warned bool
	for _, l := range lines {
		if problem, fix, ok := connectors.ParseWarning(l); ok && strings.Contains(problem, "ad_hoc_calls") && strings.Contains(fix, "CallRecordings.Read.All") {
			warned = true
		}
	}
	if err != nil || !warned {
		t.Errorf("Check = %q, %v; want a warning naming CallRecordings.Read.All", lines, err)
	}
}

// TestGroupMembersWithoutMail (issue 29, point 2): with GroupMember.Read.All but not
// User.Read.All, Graph returns a group's members with their id only; their recordings are
// still synced (by id), and Check warns naming the permission to grant.
func TestGroupMembersWithoutMail(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddGroup("team@acme.test", sam.ID)
	fake.AddRecording(sam.ID, day, []byte("one"))
	fake.Revoke(teamstest.PermUsers)
	src := newSource(t, fake, teams.Config{Organizers: []string{"group:team@acme.test"}})
	if recs, _ := list(t, src, ""); len(recs) != 1 || recs[0].Owner.ID != sam.ID {
		t.Errorf("List of a group read without User.Read.All = %+v, want Sam's recording, by id", recs)
	}
	lines, err := src.Check(context.Background())
	var warned bool
	for _, l := range lines {
		if problem, fix, ok := connectors.ParseWarning(l); ok && strings.Contains(problem, "group:team@acme.test") && strings.Contains(fix, "User.Read.All") {
			warned = true
		}
	}
	if err != nil || !warned {
		t.Errorf("Check = %q, %v; want a warning that group:team@acme.test's members lack mail, naming User.Read.All", lines, err)
	}
}
