package teams_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// TestRefusalsAboutTheAccountBlock (issue 29, point 1): Graph's 402 PaymentRequired on the
// content ("Evaluation capacity for the month has exceeded") and its 403 "No application access
// policy found for this app." on the recording are refusals about the account: Open returns
// connectors.Blocked with Graph's words (the job waits, held, and is tried again), never a
// permanent failure; a 403 naming a permission is not one. Check says each with its fix.
func TestRefusalsAboutTheAccountBlock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		refuse     func(*teamstest.Server, *teamstest.User)
		blocked    bool
		msg, check string
	}{
		{"402 on the content", func(f *teamstest.Server, _ *teamstest.User) { f.PaymentRequired(true) }, true,
			"402 PaymentRequired: " + teamstest.PaymentMessage, "no longer meters the Teams recording APIs"},
		{"no application access policy", func(f *teamstest.Server, u *teamstest.User) { f.NoPolicy(u.ID) }, true,
			"403 General: " + teamstest.NoPolicyMessage, "Grant-CsApplicationAccessPolicy"},
		{"no permission", func(f *teamstest.Server, _ *teamstest.User) { f.Revoke(teamstest.PermRecordings) }, false,
			"Missing role permissions", "grant the app registration the application permission OnlineMeetingRecording.Read.All"},
	} {
		fake := teamstest.Start(t)
		sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
		fake.AddRecording(sam.ID, day.Add(time.Hour), []byte("audio"))
		src := newSource(t, fake, teams.Config{})
		recs, _ := list(t, src, "")
		tc.refuse(fake, sam)
		_, err := read(src, recs[0])
		if err == nil || errors.Is(err, connectors.ErrBlocked) != tc.blocked || errors.Is(err, connectors.ErrTransient) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Open(%s) = %v (blocked %v), want an error saying %q, blocked %v", tc.name, err, errors.Is(err, connectors.ErrBlocked), tc.msg, tc.blocked)
		}
		_, err = src.Check(context.Background())
		if _, fix, ok := connectors.SetupFix(err); !ok || !strings.Contains(fix, tc.check) {
			t.Errorf("Check(%s) = %v, want a setup error whose fix says %q", tc.name, err, tc.check)
		}
	}
}
