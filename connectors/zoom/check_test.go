package zoom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
)

// TestCheckNamesEachSetupProblem: Check (bridge doctor, bridge sources check) reports each
// setup problem with its fix: a scope missing to list (an error), the delete scope
// after_upload needs, users not found, the account-wide listing refused, sweep_days beyond the
// six months Zoom lists (warnings; all users unknown is an error).
func TestCheckNamesEachSetupProblem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scopes  string
		cfg     zoom.Config
		problem string // of the error ("" for none)
		warns   []string
	}{
		{name: "all well", cfg: zoom.Config{AfterUpload: "trash"}},
		{name: "after_upload without the delete scope", scopes: "user:read:admin recording:read:admin", cfg: zoom.Config{AfterUpload: "delete"},
			warns: []string{"recording:write:admin", "cloud_recording:delete:recording_file:admin"}},
		{name: "granular delete scope", scopes: "user:read:admin recording:read:admin cloud_recording:delete:recording_file:admin",
			cfg: zoom.Config{AfterUpload: "trash"}},
		{name: "a user not found", cfg: zoom.Config{Users: []string{"sam@acme.test", "nobody@acme.test"}},
			warns: []string{"nobody@acme.test"}},
		{name: "no user found", cfg: zoom.Config{Users: []string{"nobody@acme.test"}}, problem: "nobody@acme.test"},
		{name: "sweep_days beyond six months", cfg: zoom.Config{SweepDays: 200}, warns: []string{"sweep_days", "six months"}},
		{name: "no scope to list recordings", scopes: "user:read:admin", problem: "recording:read:admin"},
		{name: "no account-wide listing", scopes: "user:read:admin cloud_recording:read:list_user_recordings:admin",
			warns: []string{"cloud_recording:read:list_account_recordings:admin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := zoomtest.Start(t)
			fake.AddUser("u1", "sam@acme.test", "active")
			if tc.scopes != "" {
				fake.SetScopes(tc.scopes)
			}
			lines, err := newSource(t, fake, tc.cfg).Check(context.Background())
			problem, fix, isSetup := connectors.SetupFix(err)
			switch {
			case tc.problem == "" && err != nil:
				t.Errorf("Check = %v, want no error", err)
			case tc.problem != "" && (!isSetup || !strings.Contains(problem+fix, tc.problem) || fix == ""):
				t.Errorf("Check = %v; want a setup error naming %q with its fix", err, tc.problem)
			}
			var warnings []string
			for _, l := range lines {
				if p, f, ok := connectors.ParseWarning(l); ok {
					if f == "" {
						t.Errorf("warning %q has no fix", p)
					}
					warnings = append(warnings, p+" (fix: "+f+")")
				}
			}
			all := strings.Join(warnings, "\n")
			for _, w := range tc.warns {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q; want one naming %q", warnings, w)
				}
			}
			if len(tc.warns) == 0 && len(warnings) > 0 {
				t.Errorf("warnings %q; want none", warnings)
			}
		})
	}
}

// TestAfterUploadWithoutScope: a trash refused for a missing scope is an error naming the
// scope to add; nothing is deleted.
func TestAfterUploadWithoutScope(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.SetScopes("user:read:admin recording:read:admin")
	fake.AddUser("u1", "sam@acme.test", "active")
	fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": []byte("a")})
	src := newSource(t, fake, zoom.Config{AfterUpload: "trash"})
	err := src.Finish(context.Background(), one(t, src, "standup"), connectors.OutcomeDone)
	if err == nil || !strings.Contains(err.Error(), "recording:write:admin") || len(fake.Deleted) != 0 {
		t.Errorf("Finish = %v, deleted %v; want an error naming recording:write:admin, nothing deleted", err, fake.Deleted)
	}
}
