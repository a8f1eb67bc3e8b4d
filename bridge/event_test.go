package bridge

import (
	"strings"
	"testing"
)

// TestNewEventHidesSecrets: a reason quoting an upstream error never carries a key or token
// into the outbox or a webhook.
func TestNewEventHidesSecrets(t *testing.T) {
	j := &Job{ID: "j"}
	e := NewEvent(EventHeld, j, map[string]any{"reason": "401 for key mk_live_abcdefghijklmnop1234", "code": "invalid_api_key"})
	if got := string(e.Data); strings.Contains(got, "abcdefghijklmnop1234") || !strings.Contains(got, "mk_live_[redacted]") || !strings.Contains(got, "invalid_api_key") {
		t.Errorf("NewEvent(held, reason with a key).Data = %s, want the key redacted and the rest kept", got)
	}
}
