package meet_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"
	meetapi "google.golang.org/api/meet/v2"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/meet"
)

// TestCheckNamesEachFix: Check reads each user's conference records and Drive; a scope the
// service account's delegation lacks, for either API, fails with the delegation to grant; a
// start_date older than Meet keeps conference records is a warning pointing to the gdrive
// source.
func TestCheckNamesEachFix(t *testing.T) {
	fake, drv, clk := start(t)
	lines, err := newSource(t, fake, drv, clk, meet.Config{Users: []string{sam, kim}, StartDate: "2026-01-01"}).Check(context.Background())
	if err != nil || len(lines) != 3 || !strings.Contains(lines[0], "as "+sam+": Meet conference records readable") {
		t.Fatalf("Check = %q, %v; want a line per user and a warning", lines, err)
	}
	problem, fix, ok := connectors.ParseWarning(lines[2])
	if !ok || !strings.Contains(problem, "30 days after the conference ends") || !strings.Contains(fix, "meet_recordings: true") {
		t.Errorf("Check's last line = %q, want a warning that records older than 30 days are gone, fixed by the gdrive source", lines[2])
	}

	for _, delegated := range [][]string{{drive.DriveReadonlyScope}, {meetapi.MeetingsSpaceReadonlyScope}} {
		drv.Delegate(delegated...)
		_, err := newSource(t, fake, drv, clk, meet.Config{}).Check(context.Background())
		problem, fix, ok := connectors.SetupFix(err)
		if !ok || !strings.Contains(problem, "unauthorized_client") || !strings.Contains(fix, "domain-wide delegation of "+meetapi.MeetingsSpaceReadonlyScope+
			" and "+drive.DriveReadonlyScope) {
			t.Errorf("Check with only %v delegated = %v, want the delegation to grant as its fix", delegated, err)
		}
	}
}
