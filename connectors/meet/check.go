package meet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/drive/v3"
	meetapi "google.golang.org/api/meet/v2"

	"github.com/transcript-bridge/bridge/connectors"
)

// Check implements connectors.Checker: per user, a token for Meet's scope lists their
// conference records (one), and a token for Drive's reads who they are; each refusal comes
// with its fix (connectors.NeedsSetup). A start_date older than Meet keeps conference records
// is a warning: those recordings are only in Drive.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	var lines []string
	for _, u := range s.cfg.Users {
		err := s.retry(ctx, func() error {
			_, err := s.meet[u].ConferenceRecords.List().PageSize(1).Context(ctx).Do()
			return err
		})
		if err != nil {
			return lines, connectors.NeedsSetup(fmt.Errorf("as %s: Meet conferenceRecords.list: %w", u, err), s.fix(err, u, meetapi.MeetingsSpaceReadonlyScope))
		}
		me, err := s.drive.SignedIn(ctx, u)
		if err != nil {
			return lines, connectors.NeedsSetup(fmt.Errorf("as %s: %w", u, err), s.fix(err, u, drive.DriveReadonlyScope))
		}
		lines = append(lines, fmt.Sprintf("as %s: Meet conference records readable (%s), recordings read from Drive as %s (%s)", u,
			meetapi.MeetingsSpaceReadonlyScope, me, drive.DriveReadonlyScope))
	}
	now := s.cfg.Now()
	if start, _ := s.cfg.start(now); start.Before(now.Add(-retention)) {
		lines = append(lines, connectors.Warning(
			fmt.Sprintf("start_date %s is more than 30 days back: Meet deletes a conference record 30 days after the conference ends, "+
				"so the recordings of older meetings are not found through the Meet API", s.cfg.StartDate),
			"sync them from Drive with a gdrive source with meet_recordings: true (a recording found by both sources is one job)"))
	}
	return lines, nil
}

// fix is the fix of a refusal of user's call needing scope.
func (s *Source) fix(err error, user, scope string) string {
	var re *oauth2.RetrieveError
	delegation := fmt.Sprintf("give the service account's client ID%s domain-wide delegation of %s and %s (Admin console: Security, "+
		"API controls, Domain-wide delegation)", s.clientID(), meetapi.MeetingsSpaceReadonlyScope, drive.DriveReadonlyScope)
	switch {
	case errors.As(err, &re) || strings.Contains(err.Error(), "unauthorized_client"):
		return delegation + ", and check that " + user + " is a user of the Workspace domain"
	case status(err) == http.StatusForbidden && scope == meetapi.MeetingsSpaceReadonlyScope:
		return "enable the Google Meet REST API in the service account's Google Cloud project, and " + delegation
	case status(err) == http.StatusForbidden:
		return "enable the Google Drive API in the service account's Google Cloud project, and " + delegation
	case status(err) == http.StatusUnauthorized:
		return delegation
	}
	return "check api_url and drive_url, and that Google's APIs are reachable from here"
}

// clientID is " <client_id>" from the service account's key, "" when it has none.
func (s *Source) clientID() string {
	var key struct {
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal(s.cfg.Credentials, &key) != nil || key.ClientID == "" {
		return ""
	}
	return " (" + key.ClientID + ")"
}
