package connectors_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestBlockedStatus(t *testing.T) {
	for _, tc := range []struct {
		status  int
		message string
		want    bool
	}{
		// Graph's metered APIs past the evaluation quota (learn.microsoft.com/graph/teams-licenses).
		{402, "PaymentRequired: Evaluation capacity for the month has exceeded", true},
		{402, "", true},
		// Graph without an application access policy for the organizer (learn.microsoft.com/graph/cloud-communication-online-meeting-application-access-policy).
		{403, "No application access policy found for this app.", true},
		{403, "The user does not have a valid license for this operation", true},
		{403, "Forbidden: the caller lacks OnlineMeetingRecording.Read.All", false},
		{403, "insufficientFilePermissions", false},
		{404, "license", false},
		{500, "payment", false},
	} {
		if got := connectors.BlockedStatus(tc.status, tc.message); got != tc.want {
			t.Errorf("BlockedStatus(%d, %q) = %v, want %v", tc.status, tc.message, got, tc.want)
		}
	}
}

func TestBlocked(t *testing.T) {
	err := fmt.Errorf("upload a.mp4: %w", connectors.Blocked(errors.New("graph: 402 PaymentRequired"), 0))
	if !errors.Is(err, connectors.ErrBlocked) || errors.Is(err, connectors.ErrTransient) || err.Error() != "upload a.mp4: graph: 402 PaymentRequired" {
		t.Errorf("Blocked: %q, blocked %v; want the message unchanged, blocked, not transient", err, errors.Is(err, connectors.ErrBlocked))
	}
	if got := connectors.BlockedWait(err); got != connectors.DefaultBlockedWait {
		t.Errorf("BlockedWait(no wait named) = %v, want %v", got, connectors.DefaultBlockedWait)
	}
	if got := connectors.BlockedWait(connectors.Blocked(errors.New("quota"), time.Hour)); got != time.Hour {
		t.Errorf("BlockedWait(1h) = %v, want 1h", got)
	}
	if got := connectors.BlockedWait(errors.New("x")); got != 0 {
		t.Errorf("BlockedWait(plain error) = %v, want 0", got)
	}
	if connectors.Blocked(nil, 0) != nil {
		t.Errorf("Blocked(nil) is not nil")
	}
}
