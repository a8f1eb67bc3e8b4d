package teams_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// TestNotificationCallsNoGraph (issue 29, point 2): a notification that arrives before any
// sweep, while the organizers are a group not yet resolved, is answered 202 without a Graph
// call: the fake holds every request meanwhile, and none arrives. (Resolving the organizers in
// the handler made Graph wait past its 3 seconds and answered 503.) Once Subscribe runs, the
// recording comes through intake.
func TestNotificationCallsNoGraph(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	fake.AddGroup("team@acme.test", sam.ID)
	p := newPushed(t, fake, teams.Config{Organizers: []string{"group:team@acme.test"}})
	rec := fake.AddRecording(sam.ID, time.Now().Add(-time.Hour), []byte("audio"))
	fake.Pause()
	resp, _ := post(t, p.url, string(teamstest.ChangeNotification("sub-1", clientState, time.Now().Add(time.Hour), rec)))
	if resp.StatusCode != http.StatusAccepted || fake.Held() != 0 {
		t.Errorf("notification before any sweep = %d with %d Graph requests from the handler, want 202 and none", resp.StatusCode, fake.Held())
	}
	fake.Resume()
	p.subscribe(t, fake)
	got := waitFor(t, "the notified recording", func() (int, bool) { return len(p.recordings()), len(p.recordings()) > 0 })
	if got != 1 || p.recordings()[0].ItemID != rec.ID {
		t.Errorf("after Subscribe, %d recordings taken, want the one notified", got)
	}
}

// TestOrganizersResolvedAtStartAndRefreshed (issue 29, point 2): Subscribe resolves the
// organizers at once (group members are read with no sweep nor notification yet) and again
// every OrganizersRefresh; a member added to the group meanwhile is in scope, and a
// notification of their recording is still answered while Graph holds every request (the
// refresh's own requests wait meanwhile).
func TestOrganizersResolvedAtStartAndRefreshed(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	kim := fake.AddUser("", "Kim Park", "kim@acme.test")
	team := fake.AddGroup("team@acme.test", sam.ID)
	p := newPushed(t, fake, teams.Config{Organizers: []string{"group:team@acme.test"}, OrganizersRefresh: 20 * time.Millisecond})
	p.subscribe(t, fake)
	waitFor(t, "the organizers resolved at start", func() (int, bool) { return 0, fake.Count("members") >= 1 })
	fake.Edit(func() { team.Members = append(team.Members, kim.ID) })
	n := fake.Count("members")
	waitFor(t, "the organizers resolved again", func() (int, bool) { return 0, fake.Count("members") >= n+2 })
	rec := fake.AddRecording(kim.ID, time.Now().Add(-time.Hour), []byte("audio"))
	fake.Pause()
	resp, _ := post(t, p.url, string(teamstest.ChangeNotification("sub-1", clientState, time.Now().Add(time.Hour), rec)))
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification of a new member while Graph holds every request = %d, want 202", resp.StatusCode)
	}
	fake.Resume()
	waitFor(t, "the new member's recording", func() (int, bool) { return 0, len(p.recordings()) == 1 })
}

// TestNotificationQueueFull: notifications that wait to be read beyond NotifyQueue are
// answered 503, for Graph to send them again.
func TestNotificationQueueFull(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	p := newPushed(t, fake, teams.Config{NotifyQueue: 1}) // no Subscribe: nothing reads the queue
	var codes []int
	for range 2 {
		rec := fake.AddRecording(sam.ID, time.Now(), []byte("x"))
		resp, _ := post(t, p.url, string(teamstest.ChangeNotification("sub-1", clientState, time.Now().Add(time.Hour), rec)))
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != http.StatusAccepted || codes[1] != http.StatusServiceUnavailable {
		t.Errorf("two notifications with room for one = %v, want [202 503]", codes)
	}
}
