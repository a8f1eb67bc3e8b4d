package teams

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// callRecording is Graph's callRecording resource, as delta pages and GET return it.
type callRecording struct {
	ID                   string `json:"id"`
	MeetingID            string `json:"meetingId"`
	CallID               string `json:"callId"`
	ContentCorrelationID string `json:"contentCorrelationId"`
	CreatedDateTime      string `json:"createdDateTime"`
	EndDateTime          string `json:"endDateTime"`
	RecordingContentURL  string `json:"recordingContentUrl"`
	MeetingOrganizer     struct {
		User *struct {
			ID          string `json:"id"`
			DisplayName string `json:"displayName"`
			TenantID    string `json:"tenantId"`
		} `json:"user"`
	} `json:"meetingOrganizer"`
	Removed *struct {
		Reason string `json:"reason"`
	} `json:"@removed"`
}

// maxExternalID is the longest X-External-Id the transcription API takes (128 printable ASCII
// characters, api-reference.md).
const maxExternalID = 128

// externalID is the X-External-Id of a recording: its id as it is when it fits, else "teams:"
// and the SHA-256 of the id in hex (real ids are about 290 characters; the full id is then in
// the metadata as teams_recording_id).
func externalID(id string) (ext string, hashed bool) {
	if len(id) <= maxExternalID && !strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r > '~' }) {
		return id, false
	}
	sum := sha256.Sum256([]byte(id))
	return "teams:" + hex.EncodeToString(sum[:]), true
}

// version is a recording's version: its createdDateTime in UTC, the same however Graph writes
// it (a recording never changes; this is stable across delta rounds, resyncs and notifications).
func version(cr callRecording) (string, time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, cr.CreatedDateTime)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("recording %s: createdDateTime %q: %w", cr.ID, cr.CreatedDateTime, err)
	}
	return t.UTC().Format(time.RFC3339Nano), t.UTC(), nil
}

// recording describes cr, organized by org: a meeting's recording, or with adhoc an ad hoc
// call's (identified by its callId: it has no meetingId); ok is false for an entry that is no
// recording to take (removed, or without ids or a creation time).
func recording(cr callRecording, org user, adhoc bool) (connectors.Recording, bool) {
	ver, created, err := version(cr)
	parent := cr.MeetingID
	if adhoc {
		parent = cr.CallID
	}
	if cr.Removed != nil || cr.ID == "" || parent == "" || err != nil {
		return connectors.Recording{}, false
	}
	end := cr.EndDateTime
	if t, err := time.Parse(time.RFC3339Nano, end); err == nil {
		end = t.UTC().Format(time.RFC3339Nano)
	}
	ext, hashed := externalID(cr.ID)
	who := cleanName(org.DisplayName)
	if who == "" {
		who = cleanName(org.String())
	}
	r := connectors.Recording{
		ItemID: cr.ID, Version: ver, ModTime: created, SourceExternalID: ext,
		Name:  fmt.Sprintf("Teams meeting %s %s.mp4", who, created.Format("2006-01-02 1504")),
		Owner: &connectors.Owner{Provider: "teams", ID: org.ID, Email: org.email(), Name: org.DisplayName},
		Fields: map[string]string{"organizer_id": org.ID, "organizer_email": org.email(), "organizer_name": org.DisplayName,
			"meeting_id": cr.MeetingID, "recording_id": cr.ID, "content_correlation_id": cr.ContentCorrelationID,
			"created": ver, "end": end},
		Metadata: map[string]string{"teams_meeting_id": cr.MeetingID, "teams_organizer": org.String(), "teams_start": ver},
	}
	if adhoc {
		r.Name = fmt.Sprintf("Teams call %s %s.mp4", who, created.Format("2006-01-02 1504"))
		r.Fields["meeting_id"], r.Fields["call_id"] = "", cr.CallID
		delete(r.Metadata, "teams_meeting_id")
		r.Metadata["teams_call_id"] = cr.CallID
	}
	if end != "" {
		r.Metadata["teams_end"] = end
	}
	if cr.ContentCorrelationID != "" {
		r.Metadata["teams_content_correlation_id"] = cr.ContentCorrelationID
	}
	if hashed {
		r.Metadata["teams_recording_id"] = cr.ID
	}
	return r, true
}

// cleanName keeps a display name usable in a file name.
func cleanName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '-'
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// meetingOrganizer reads the organizer's object id out of an online meeting id: the base64 of
// "1*<organizer id>*0**19:meeting_…@thread.v2". Graph documents no such format, so ok is false
// when the id does not decode so (the sweep then finds the recording).
func meetingOrganizer(meetingID string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(meetingID)
	if err != nil {
		raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(meetingID, "="))
	}
	if err != nil {
		return "", false
	}
	parts := strings.Split(string(raw), "*")
	if len(parts) < 3 || !objectID(parts[1]) {
		return "", false
	}
	return strings.ToLower(parts[1]), true
}
