package gdrivetest

// Where Google Meet files a recording in Drive. "After a conference ends, Meet saves recordings
// and transcripts to the meeting organizer's Google Drive" ("Work with artifacts",
// https://developers.google.com/workspace/meet/api/guides/artifacts). Until 2026-07-23 that was
// the organizer's "Meet Recordings" folder in My Drive, the file shared with the participants.
// Since then (Google Workspace Updates, July 2026, "Google Meet now organizes your meeting
// notes, transcripts and recordings in your Google Drive", as issue 34 quotes it): a "Google
// Meet" folder with one subfolder per meeting; the old folder is renamed and abandoned (what
// it holds stays); participants get shortcuts to the organizer's files instead. The
// announcement is not among the references we could reach: the renamed folder's name is the
// fake's choice (RenamedLegacyFolder), and so is where a participant's shortcuts go (a
// subfolder of the meeting's name in their own "Google Meet" folder).

// Folder names of Meet's layouts.
const (
	// LegacyFolder is the folder Meet saved into until 2026-07-23.
	LegacyFolder = "Meet Recordings"
	// MeetFolder is the folder Meet saves into since, one subfolder per meeting.
	MeetFolder = "Google Meet"
	// RenamedLegacyFolder is the name SwitchMeetLayout gives the abandoned LegacyFolder.
	RenamedLegacyFolder = "Meet Recordings (archived)"
)

// MeetLayout is how Meet files a recording (MeetRecording).
type MeetLayout int

// Meet's layouts.
const (
	// LegacyLayout: the MP4 in the organizer's LegacyFolder, shared with the participants.
	LegacyLayout MeetLayout = iota
	// FolderLayout: the MP4 in a subfolder named after the meeting in the organizer's
	// MeetFolder; each participant gets a shortcut to it in a subfolder of the same name in
	// their own MeetFolder.
	FolderLayout
)

// MeetRecording files the recording of meeting (its title and start, as Meet names it:
// "Standup (2026-11-20 10:00 GMT+1)") as Meet does under layout, creating the folders it needs,
// and returns the MP4's file id. The file is named meeting + " - Recording".
func (s *Server) MeetRecording(layout MeetLayout, organizer string, participants []string, meeting string, content []byte) string {
	name := meeting + " - Recording"
	if layout == LegacyLayout {
		return s.Put(name, "video/mp4", s.folderIn(LegacyFolder, Root(organizer), organizer), organizer, "", content)
	}
	folder := s.folderIn(meeting, s.folderIn(MeetFolder, Root(organizer), organizer), organizer)
	id := s.Put(name, "video/mp4", folder, organizer, "", content)
	for _, p := range participants {
		s.Shortcut(name, s.folderIn(meeting, s.folderIn(MeetFolder, Root(p), p), p), p, id)
	}
	return id
}

// SwitchMeetLayout does to user's Drive what the change of 2026-07-23 did: their LegacyFolder,
// when they have one, is renamed RenamedLegacyFolder and keeps what it holds. It returns the
// folder's id ("" when there is none).
func (s *Server) SwitchMeetLayout(user string) string {
	id := s.find(LegacyFolder, Root(user), user, FolderMime)
	if id != "" {
		s.Rename(id, RenamedLegacyFolder)
	}
	return id
}

// folderIn returns the id of the folder named name in parent, owned by owner, creating it when
// there is none.
func (s *Server) folderIn(name, parent, owner string) string {
	if id := s.find(name, parent, owner, FolderMime); id != "" {
		return id
	}
	return s.Folder(name, parent, owner, "")
}
