package zoom

import (
	"errors"
	"strings"
)

// The scopes the source uses, classic and granular (either form grants the call): each
// endpoint's reference page lists them
// (https://developers.zoom.us/docs/api/meetings/#tag/cloud-recording,
// https://developers.zoom.us/docs/api/users/#tag/users).
var (
	// scopeListUsers lists the account's users (GET /users) and reads one (GET /users/{userId}).
	scopeListUsers = []string{"user:read:admin", "user:read:list_users:admin"}
	// scopeUserRecordings lists a user's recordings (GET /users/{userId}/recordings).
	scopeUserRecordings = []string{"recording:read:admin", "cloud_recording:read:list_user_recordings:admin"}
	// scopeAccountRecordings lists the account's recordings (GET /accounts/me/recordings).
	scopeAccountRecordings = []string{"recording:read:admin", "cloud_recording:read:list_account_recordings:admin"}
	// scopeDelete trashes or deletes a recording file (DELETE
	// /meetings/{meetingId}/recordings/{recordingId}), for after_upload.
	scopeDelete = []string{"recording:write:admin", "cloud_recording:delete:recording_file:admin"}
)

// granted reports whether the token's scope field (space-separated) holds one of scopes.
func granted(tokenScopes string, scopes []string) bool {
	for _, g := range strings.Fields(tokenScopes) {
		for _, s := range scopes {
			if g == s {
				return true
			}
		}
	}
	return false
}

// scopeNames reads a scope list for a message: "a (or b)".
func scopeNames(scopes []string) string {
	return scopes[0] + " (or " + strings.Join(scopes[1:], ", ") + ")"
}

// addScopeFix is the fix of a missing scope.
func addScopeFix(scopes []string) string {
	return "add the scope " + scopeNames(scopes) + " to the app (Zoom App Marketplace, Manage, your Server-to-Server OAuth app, Scopes) and activate it again"
}

// missingScope reports whether err is Zoom's refusal of a token without the endpoint's scope:
// 400 with code 4711 ("Invalid access token, does not contain scopes:[…]") or 4700
// (https://developers.zoom.us/docs/api/errors/).
func missingScope(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == 400 && (e.Code == 4711 || e.Code == 4700 || strings.Contains(e.Message, "does not contain scopes"))
}
