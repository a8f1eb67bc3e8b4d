package gdrivetest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/api/drive/v3"
)

// The shared-drive rules of files.list and changes.list, from "Implement shared drive
// support", https://developers.google.com/workspace/drive/api/guides/enable-shareddrives:
//
//   - files.list: "includeItemsFromAllDrives: Whether both My Drive and shared drive items
//     should be included in results. If not present or set to false, then shared drive items
//     are not returned." and "supportsAllDrives: … If false, shared drive items are not
//     included in the response." corpora is "user" by default; with includeItemsFromAllDrives
//     "user" is "files that the user has accessed, including both shared drive and My Drive
//     files", "drive" is "all items in the specified shared drive. The driveId must be
//     specified", "allDrives" both.
//   - changes.list: "includeItemsFromAllDrives: Whether shared drive files or changes should
//     be included in the list of changes." and "supportsAllDrives: … If false, then shared
//     drive items, including both shared drives and files within a shared drive, aren't
//     returned." Without driveId the feed is the user's (with both flags, "changes to files
//     inside or outside of shared drives that the user has accessed"); with driveId, "changes
//     to the particular shared drive that was specified and items inside that shared drive".
//
// So a folder inside a shared drive listed without both flags comes back empty, with 200, as
// an empty folder would. The fake has no membership: every caller has accessed every item.

// allDrives reports whether q sends both supportsAllDrives=true and
// includeItemsFromAllDrives=true, without which Drive returns no shared-drive item.
func allDrives(q map[string][]string) bool {
	return first(q, "supportsAllDrives") == "true" && first(q, "includeItemsFromAllDrives") == "true"
}

// trim keeps only what Drive returns without a fields parameter.
func trim(f *drive.File, q map[string][]string) *drive.File {
	if len(q["fields"]) > 0 {
		return f
	}
	return &drive.File{Kind: f.Kind, Id: f.Id, Name: f.Name, MimeType: f.MimeType}
}

func (s *Server) list(w http.ResponseWriter, q map[string][]string, user string) {
	expr, err := parseQuery(first(q, "q"))
	if err != nil {
		writeError(w, "invalid", driveError{status: http.StatusBadRequest, domain: "global", message: "Invalid Value: " + err.Error(),
			location: "q", locationType: "parameter"})
		return
	}
	corpora, driveID := first(q, "corpora"), first(q, "driveId")
	if corpora == "" {
		corpora = "user" // "By default, corpora is set to user."
	}
	if (driveID != "") != (corpora == "drive") {
		refuse(w, "teamDriveIdRequiresTeamDriveCorpora")
		return
	}
	shared := allDrives(q)
	size, _ := strconv.Atoi(first(q, "pageSize"))
	if size <= 0 || size > 1000 {
		size = 100
	}
	offset := 0
	if tok := first(q, "pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || !strings.HasPrefix(string(b), "o=") {
			writeError(w, "invalid", driveError{status: http.StatusBadRequest, domain: "global", message: "Invalid Value",
				location: "pageToken", locationType: "parameter"})
			return
		}
		offset, _ = strconv.Atoi(strings.TrimPrefix(string(b), "o="))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*drive.File
	for _, id := range s.order {
		f := s.files[id]
		switch {
		case f == nil, f.Hidden[user], f.DriveID != "" && !shared, corpora == "drive" && f.DriveID != driveID, !expr(f, user):
			continue
		}
		match = append(match, trim(apiFile(f), q))
	}
	out := drive.FileList{Kind: "drive#fileList", IncompleteSearch: false, Files: []*drive.File{}}
	if offset < len(match) {
		end := min(offset+size, len(match))
		out.Files = match[offset:end]
		if end < len(match) {
			out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte("o=" + strconv.Itoa(end)))
		}
	}
	answer(w, q, out)
}

// changeList answers changes.list for user, whose feed leaves out what they cannot read.
func (s *Server) changeList(w http.ResponseWriter, q map[string][]string, user string) {
	from, err := strconv.Atoi(first(q, "pageToken"))
	if err != nil || from < 1 {
		writeError(w, "invalid", driveError{status: http.StatusBadRequest, domain: "global", message: "Invalid Value",
			location: "pageToken", locationType: "parameter"})
		return
	}
	size, _ := strconv.Atoi(first(q, "pageSize"))
	if size <= 0 || size > 1000 {
		size = 100
	}
	driveID, shared := first(q, "driveId"), allDrives(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := drive.ChangeList{Kind: "drive#changeList", Changes: []*drive.Change{}}
	i := from - 1
	for ; i < len(s.changes) && len(out.Changes) < size; i++ {
		c := s.changes[i]
		switch {
		case c.driveID != "" && !shared, driveID != "" && c.driveID != driveID:
			continue
		}
		ch := &drive.Change{Kind: "drive#change", ChangeType: "file", FileId: c.fileID, Removed: c.removed}
		if f := s.files[c.fileID]; f != nil && !c.removed && !f.Hidden[user] {
			ch.File = apiFile(f)
		} else {
			ch.Removed = true
		}
		out.Changes = append(out.Changes, ch)
	}
	if i < len(s.changes) {
		out.NextPageToken = strconv.Itoa(i + 1)
	} else {
		out.NewStartPageToken = strconv.Itoa(len(s.changes) + 1)
	}
	answer(w, q, out)
}
