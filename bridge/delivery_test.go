package bridge

import (
	"strings"
	"testing"
)

// TestNewWebhookID: ids are Standard Webhooks msg_ ids, all different, and one made later sorts later.
func TestNewWebhookID(t *testing.T) {
	const n = 1000
	seen := make(map[string]bool, n)
	prev := ""
	for range n {
		id, err := NewWebhookID()
		if err != nil {
			t.Fatal(err)
		}
		rest, ok := strings.CutPrefix(id, "msg_")
		if !ok || len(rest) != 26 || strings.Trim(rest, "0123456789abcdefghjkmnpqrstvwxyz") != "" {
			t.Fatalf("NewWebhookID = %q, want msg_ and 26 lower-case Crockford base32 characters", id)
		}
		if seen[id] {
			t.Fatalf("NewWebhookID repeated %s", id)
		}
		seen[id] = true
		if id <= prev {
			t.Errorf("NewWebhookID %s after %s: want later ids to sort later", id, prev)
		}
		prev = id
	}
}
