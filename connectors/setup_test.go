package connectors_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestWarning(t *testing.T) {
	line := connectors.Warning("after_upload: trash needs recording:write:admin (the app has recording:read:admin)", "add the scope to the app")
	problem, fix, ok := connectors.ParseWarning(line)
	if !ok || problem != "after_upload: trash needs recording:write:admin (the app has recording:read:admin)" || fix != "add the scope to the app" {
		t.Errorf("ParseWarning(%q) = %q, %q, %v", line, problem, fix, ok)
	}
	if _, _, ok := connectors.ParseWarning("3 users, 12 recordings"); ok {
		t.Errorf("ParseWarning(a plain line) = ok")
	}
}

func TestNeedsSetup(t *testing.T) {
	base := errors.New("403: No application access policy found for this app")
	err := fmt.Errorf("source teams: %w", connectors.NeedsSetup(base, "grant the policy with Grant-CsApplicationAccessPolicy"))
	problem, fix, ok := connectors.SetupFix(err)
	if !ok || problem != base.Error() || fix != "grant the policy with Grant-CsApplicationAccessPolicy" || !errors.Is(err, base) {
		t.Errorf("SetupFix(%q) = %q, %q, %v", err, problem, fix, ok)
	}
	if _, _, ok := connectors.SetupFix(base); ok {
		t.Errorf("SetupFix(a plain error) = ok")
	}
}
