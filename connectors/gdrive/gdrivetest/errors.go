package gdrivetest

import (
	"encoding/json"
	"net/http"
)

// driveError is one of Drive's error answers: its status and the one entry of its errors[].
// Each is written as Drive writes it (testdata/README.md names where each was taken from, and
// TestErrorAnswersMatchRecorded holds the fake to those recordings).
type driveError struct {
	status          int
	domain, message string
	// location and locationType name the parameter at fault, where Drive names one.
	location, locationType string
}

// Reasons of the refusals the fake gives; Fail, FailWith and RefuseDownload take them.
const (
	// ReasonUserRateLimit is the per-user rate limit (403).
	ReasonUserRateLimit = "userRateLimitExceeded"
	// ReasonRateLimit is the project's rate limit (429).
	ReasonRateLimit = "rateLimitExceeded"
	// ReasonBackend is a server error (500).
	ReasonBackend = "backendError"
	// ReasonDailyLimit is the project's spent "Queries per day" quota (403).
	ReasonDailyLimit = "dailyLimitExceeded"
	// ReasonDomainPolicy is a domain whose administrators disabled Drive apps (403).
	ReasonDomainPolicy = "domainPolicy"
	// ReasonDownloadQuota is a file downloaded too often: refused for about a day (403).
	ReasonDownloadQuota = "downloadQuotaExceeded"
	// ReasonCannotDownload is a file the user may not download (403), for good.
	ReasonCannotDownload = "cannotDownloadFile"
	// ReasonAbusive is a file flagged as malware or spam, downloadable only with
	// acknowledgeAbuse=true (403).
	ReasonAbusive = "cannotDownloadAbusiveFile"
)

// driveErrors are Drive's answers by reason.
//
// From https://developers.google.com/workspace/drive/api/guides/handle-errors ("Resolve
// errors"), whose JSON samples give the status, domain and message: userRateLimitExceeded,
// rateLimitExceeded (the 429 sample), dailyLimitExceeded, domainPolicy, fileNotDownloadable;
// backendError is its "500 Backend error" (no sample there; Drive's words as recorded by
// clients). The page documents neither downloadQuotaExceeded nor cannotDownloadFile: their
// bodies are real answers recorded in public threads (testdata/README.md), as is
// cannotDownloadAbusiveFile's and teamDriveIdRequiresTeamDriveCorpora's.
var driveErrors = map[string]driveError{
	ReasonUserRateLimit:  {status: http.StatusForbidden, domain: "usageLimits", message: "User Rate Limit Exceeded"},
	ReasonRateLimit:      {status: http.StatusTooManyRequests, domain: "usageLimits", message: "Rate Limit Exceeded"},
	ReasonBackend:        {status: http.StatusInternalServerError, domain: "global", message: "Backend Error"},
	ReasonDailyLimit:     {status: http.StatusForbidden, domain: "usageLimits", message: "Daily Limit Exceeded"},
	ReasonDomainPolicy:   {status: http.StatusForbidden, domain: "global", message: "The domain administrators have disabled Drive apps."},
	ReasonDownloadQuota:  {status: http.StatusForbidden, domain: "global", message: "The download quota for this file has been exceeded."},
	ReasonCannotDownload: {status: http.StatusForbidden, domain: "global", message: "This file cannot be downloaded by the user."},
	ReasonAbusive: {status: http.StatusForbidden, domain: "global",
		message: "This file has been identified as malware or spam and cannot be downloaded."},
	"fileNotDownloadable": {status: http.StatusForbidden, domain: "global",
		message: "Only files with binary content can be downloaded. Use Export with Docs Editors files."},
	// files.list with driveId but not corpora=drive, or corpora=drive without driveId. The
	// recorded thread shows the body, not the status: 400, as "Resolve errors" gives a
	// badRequest when "a combination of provided fields is invalid".
	"teamDriveIdRequiresTeamDriveCorpora": {status: http.StatusBadRequest, domain: "global",
		message: "The driveId parameter must be specified if and only if corpora is set to drive."},
}

// notFound is Drive's 404 for a file the caller cannot see: one that does not exist, that is
// not shared with them, or that lives in a shared drive when supportsAllDrives=true was not
// sent ("Resolve errors", notFound: "If the file is located in a shared drive, and you're
// using the files.get method, make sure the supportsAllDrives query parameter is set to
// true"). The message and location are as recorded in
// https://github.com/googleapis/google-api-php-client/issues/1782 and
// https://github.com/prasmussen/gdrive/issues/623 ("File not found: XYZ123.").
func notFound(id string) driveError {
	return driveError{status: http.StatusNotFound, domain: "global", message: "File not found: " + id + ".",
		location: "fileId", locationType: "parameter"}
}

// writeError writes e with reason as Drive does: {"error": {"code", "message", "errors": [{
// "message", "domain", "reason", ["location", "locationType"]}]}}, as JSON.
func writeError(w http.ResponseWriter, reason string, e driveError) {
	entry := map[string]string{"domain": e.domain, "reason": reason, "message": e.message}
	if e.location != "" {
		entry["location"], entry["locationType"] = e.location, e.locationType
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.status, "message": e.message,
		"errors": []map[string]string{entry}}})
}

// refuse writes Drive's answer for reason (which must be one of driveErrors).
func refuse(w http.ResponseWriter, reason string) {
	e, ok := driveErrors[reason]
	if !ok {
		panic("gdrivetest: no recorded answer for reason " + reason)
	}
	writeError(w, reason, e)
}
