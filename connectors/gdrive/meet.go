package gdrive

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors"
)

// Where Google Meet files recordings in each subject's My Drive (meet_recordings). "After a
// conference ends, Meet saves recordings and transcripts to the meeting organizer's Google
// Drive" ("Work with artifacts", https://developers.google.com/workspace/meet/api/guides/artifacts):
// until 2026-07-23 into a "Meet Recordings" folder at the top of My Drive; since then (Google
// Workspace Updates, July 2026, "Google Meet now organizes your meeting notes, transcripts and
// recordings in your Google Drive", as issue 34 quotes it) into a "Google Meet" folder there,
// one subfolder per meeting, participants getting shortcuts to the organizer's files
// (shortcut.go); the old folder is renamed and abandoned, with the recordings made before. So
// both are synced: every "Google Meet" folder at the top of My Drive, and the legacy folder,
// found by name until it is seen (its old name, or a renamed one that keeps "Meet Recordings"
// in it: the announcement does not give the new name), and by its id from then on, whatever it
// is called. A "Google Meet" folder made after a full listing is seen in the changes feed as a
// new folder in My Drive (newMeetFolder) and listed at once, once the id of My Drive is known:
// the parent of the folders found at its top ('root' in parents); until then, at the next full
// listing.

// The names of Meet's folders.
const (
	meetFolder   = "Google Meet"
	legacyFolder = "Meet Recordings"
)

// meetFolders are the Meet folders at the top of a subject's My Drive, by name, and the id of
// My Drive ("" when it holds no folder).
type meetFolders struct {
	current, legacy []*drive.File
	root            string
}

// findMeetFolders lists the folders at the top of the subject's My Drive and keeps Meet's:
// "Google Meet", and those whose names contain "Meet Recordings".
func (u *user) findMeetFolders(ctx context.Context) (meetFolders, error) {
	var m meetFolders
	err := u.pages(ctx, "", "'root' in parents and mimeType = '"+folderMime+"' and trashed = false", func(f *drive.File) {
		if len(f.Parents) > 0 {
			m.root = f.Parents[0]
		}
		switch {
		case f.Name == meetFolder:
			m.current = append(m.current, f)
		case strings.Contains(strings.ToLower(f.Name), strings.ToLower(legacyFolder)):
			m.legacy = append(m.legacy, f)
		}
	})
	return m, err
}

// meetRoots returns the subject's Meet folders to list, remembering in the state the id of
// their My Drive and of the legacy folders once seen (followed by id from then on).
func (u *user) meetRoots(ctx context.Context) ([]string, error) {
	m, err := u.findMeetFolders(ctx)
	if err != nil {
		return nil, err
	}
	if m.root != "" {
		u.state.Root = m.root
	}
	if len(u.state.Legacy) == 0 {
		for _, f := range m.legacy {
			u.state.Legacy = append(u.state.Legacy, f.Id)
		}
	}
	var ids []string
	for _, f := range m.current {
		ids = append(ids, f.Id)
	}
	return append(ids, u.state.Legacy...), nil
}

// newMeetFolder reports whether f, from the changes feed, is a "Google Meet" folder Meet has
// just made at the top of the subject's My Drive.
func (u *user) newMeetFolder(f *drive.File) bool {
	return u.src.cfg.MeetRecordings && f.MimeType == folderMime && f.Name == meetFolder && u.state.Root != "" &&
		len(f.Parents) > 0 && f.Parents[0] == u.state.Root
}

// checkMeet says which Meet folders who has, and what Meet does when there are none.
func (u *user) checkMeet(ctx context.Context, who string) ([]string, error) {
	m, err := u.findMeetFolders(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, f := range m.current {
		lines = append(lines, fmt.Sprintf("%s: %q folder (%s), one subfolder per meeting, shortcuts followed: %s", who, f.Name, f.Id, listing("")))
	}
	for _, f := range m.legacy {
		lines = append(lines, fmt.Sprintf("%s: legacy Meet folder %q (%s), where Meet saved until 2026-07-23, followed by its id: %s", who,
			f.Name, f.Id, listing("")))
	}
	switch {
	case len(m.current) == 0 && len(m.legacy) == 0:
		lines = append(lines, connectors.Warning(
			fmt.Sprintf("%s has neither a %q nor a %q folder, so nothing is listed for them: since 2026-07-23 Meet saves each "+
				"recording into a subfolder of %q at the top of the organizer's My Drive, creating it with their first recording, and "+
				"gives participants shortcuts there; recordings made before are in %q (since renamed)", who, meetFolder, legacyFolder,
				meetFolder, legacyFolder),
			fmt.Sprintf("nothing to do if %s has had no recorded meeting; otherwise check that the subject is the account that "+
				"organized or attended them, or sync the organizers instead (subjects)", who)))
	case len(m.current) == 0:
		lines = append(lines, fmt.Sprintf("%s has no %q folder yet: Meet creates it at the top of the organizer's My Drive with "+
			"their first recording since 2026-07-23 (participants get shortcuts there); it is listed as soon as it appears", who, meetFolder))
	}
	return lines, nil
}
