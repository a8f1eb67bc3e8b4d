package teams

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestExternalID(t *testing.T) {
	long := strings.Repeat("VjIjIzE5NzZm", 25)
	for _, tc := range []struct {
		id, want string
		hashed   bool
	}{
		{"7e31db25-bc6e-4fd8-96c7-e01264e9b6fc", "7e31db25-bc6e-4fd8-96c7-e01264e9b6fc", false},
		{strings.Repeat("a", 128), strings.Repeat("a", 128), false},
		{long, "teams:" + sha(long), true},
		{"tab\there", "teams:" + sha("tab\there"), true},
	} {
		got, hashed := externalID(tc.id)
		if got != tc.want || hashed != tc.hashed {
			t.Errorf("externalID(%q) = %q, %v, want %q, %v", tc.id, got, hashed, tc.want, tc.hashed)
		}
		if again, _ := externalID(tc.id); again != got {
			t.Errorf("externalID(%q) = %q then %q, want it stable", tc.id, got, again)
		}
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestMeetingOrganizer(t *testing.T) {
	// The meeting id of Microsoft's documentation (a recording's notification).
	doc := "MSo5NzZmNGIzMS1mZDAxLTRlMGItOTE3OC0yOWNjNDBjMTQ0MzgqMCoqMTk6bWVldGluZ19NMk0zTlRReFkySXRaamsyWmkwME5UTTRMV0l4TTJFdE1EQmtPV1E1TW1Rek0yRXhAdGhyZWFkLnYy"
	for _, tc := range []struct {
		meeting, want string
		ok            bool
	}{
		{doc, "976f4b31-fd01-4e0b-9178-29cc40c14438", true},
		{base64.StdEncoding.EncodeToString([]byte("1*not-a-guid*0**19:meeting_x@thread.v2")), "", false},
		{"not base64!", "", false},
	} {
		if got, ok := meetingOrganizer(tc.meeting); got != tc.want || ok != tc.ok {
			t.Errorf("meetingOrganizer(%q) = %q, %v, want %q, %v", tc.meeting, got, ok, tc.want, tc.ok)
		}
	}
}

func TestExpired(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&GraphError{Status: http.StatusGone, Code: "resyncRequired"}, true},
		{&GraphError{Status: http.StatusBadRequest, Code: "SyncStateNotFound"}, true},
		{&GraphError{Status: http.StatusBadRequest, Code: "BadRequest"}, false},
		{&GraphError{Status: http.StatusForbidden, Code: "Forbidden"}, false},
	} {
		if got := expired(tc.err); got != tc.want {
			t.Errorf("expired(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestCursor(t *testing.T) {
	links := map[string]string{"u1": "https://graph.microsoft.com/v1.0/users/u1/onlineMeetings/getAllRecordings(meetingOrganizerUserId='u1')/delta?$deltatoken=x"}
	got, err := decodeCursor(encodeCursor(links))
	if err != nil || got["u1"] != links["u1"] {
		t.Errorf("decodeCursor(encodeCursor(%v)) = %v, %v", links, got, err)
	}
	for _, bad := range []string{"2026-11-20", "teamsv1:!!", "teamsv1:" + base64.RawStdEncoding.EncodeToString([]byte("not gzip"))} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("decodeCursor(%q) = nil error, want one", bad)
		}
	}
}

func TestRenewAt(t *testing.T) {
	got := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		life, lifetime time.Duration
		want           time.Duration // after got
	}{
		{4230 * time.Minute, 4230 * time.Minute, 2820 * time.Minute},
		{50 * time.Minute, 4230 * time.Minute, 50*time.Minute - 50*time.Minute/3}, // granted less than asked
		{10 * time.Hour, time.Hour, 10*time.Hour - 20*time.Minute},                // found, living longer than asked
	} {
		if got := renewAt(got.Add(tc.life), got, tc.lifetime).Sub(got); got != tc.want {
			t.Errorf("renewAt(life %v, lifetime %v) = %v after, want %v", tc.life, tc.lifetime, got, tc.want)
		}
	}
}
