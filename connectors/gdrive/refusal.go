package gdrive

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/transcript-bridge/bridge/connectors"
)

// downloadQuotaWait is how long a file whose download quota is spent waits: Drive refuses it
// (403 downloadQuotaExceeded, no Retry-After) for about a day, as its users report
// (https://github.com/vye16/shape-of-motion/issues/73: "it would refresh after one day";
// https://github.com/rclone/rclone/issues/2652: "the ban should only be 24h").
//
// It is a connectors.Blocked refusal rather than a Transient one: the transient backoff
// (seconds, then hours) would only spend requests against a refusal that lasts the day, and its
// 72 h deadline would hold the job anyway; Blocked holds it at once with Drive's words where
// the operator sees them, tries again when the quota renews, releases at once by hand (bridge
// jobs release), and never skips it.
const downloadQuotaWait = 24 * time.Hour

// accountReasons are Drive refusals about the account or project rather than the file, which
// last until someone acts or the day's quota renews ("Resolve errors",
// https://developers.google.com/workspace/drive/api/guides/handle-errors): domainPolicy ("the
// policy for the user's domain doesn't allow access to Drive by your app"), dailyLimitExceeded
// (the project's "Queries per day" cap).
var accountReasons = []string{"domainPolicy", "dailyLimitExceeded"}

// meanings say what a permanent refusal's reason means, where Drive's message says little.
var meanings = map[string]string{
	// Drive's files resource: copyRequiresWriterPermission, "whether the options to copy,
	// print, or download this file should be disabled for readers and commenters".
	"cannotDownloadFile": "Drive will not let this account download the file (its owner may have turned off download, print " +
		"and copy for viewers and commenters): give the account edit access, or have the owner allow downloading",
	"cannotDownloadAbusiveFile": "Google flagged the file as malware or spam: set acknowledge_abuse: true to download it anyway",
}

// reasons are the reasons of a Drive error.
func reasons(ge *googleapi.Error) []string {
	var out []string
	for _, e := range ge.Errors {
		out = append(out, e.Reason)
	}
	return out
}

// refusal classifies a Drive refusal that is not throttling, err wrapping ge: a spent download
// quota waits a day and a refusal about the account (accountReasons, a 402, a 403 naming a
// licence or billing: connectors.BlockedStatus) holds the job; others stay permanent, with
// their meaning.
func refusal(ge *googleapi.Error, err error) error {
	rs := reasons(ge)
	switch {
	case slices.Contains(rs, "downloadQuotaExceeded"):
		return connectors.Blocked(fmt.Errorf("%w (Drive's download quota for this file is spent; it renews in about a day)", err),
			downloadQuotaWait)
	case ge.Code == http.StatusForbidden && slices.ContainsFunc(rs, func(r string) bool { return slices.Contains(accountReasons, r) }),
		connectors.BlockedStatus(ge.Code, fmt.Sprint(rs, " ", ge.Message)):
		return connectors.Blocked(err, 0)
	}
	for _, r := range rs {
		if m, ok := meanings[r]; ok {
			return fmt.Errorf("%w: %s", err, m)
		}
	}
	return err
}
