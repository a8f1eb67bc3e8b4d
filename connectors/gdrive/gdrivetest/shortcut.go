package gdrivetest

// Shortcuts and access, as "Create a shortcut to a Drive file" documents them
// (https://developers.google.com/workspace/drive/api/guides/shortcuts): a shortcut has "An
// application/vnd.google-apps.shortcut MIME type", "A targetId pointing to the target file or
// folder", "A targetMimeType indicating the MIME type for the target … copied to the
// targetMimeType field when the shortcut is created" (so it may be stale), both "part of the
// shortcutDetails field within the file resource"; "When the target is deleted, or when the
// current user loses access to the target, the user's shortcut pointing to the target breaks",
// and the target itself then answers 404 ("Resolve errors", notFound: "The user doesn't have
// read access to a file, or the file doesn't exist").

// ShortcutMime is Drive's shortcut type.
const ShortcutMime = "application/vnd.google-apps.shortcut"

// Shortcut creates a shortcut named name in parent, owned by owner, to target, and returns its
// id. Its targetMimeType is the target's type now.
func (s *Server) Shortcut(name, parent, owner, target string) string {
	s.mu.Lock()
	mime := ""
	if t := s.files[target]; t != nil {
		mime = t.MimeType
	}
	s.mu.Unlock()
	return s.add(&File{Name: name, MimeType: ShortcutMime, Parents: []string{parent}, Owner: owner, Target: target, TargetMime: mime})
}

// Unshare takes away user's access to a file: files.get answers 404, files.list leaves it out
// and user's changes feed reports it removed, as for a file that is gone.
func (s *Server) Unshare(id, user string) {
	s.edit(id, func(f *File) {
		if f.Hidden == nil {
			f.Hidden = map[string]bool{}
		}
		f.Hidden[user] = true
	})
}

// Rename gives a file or folder another name (its id stays).
func (s *Server) Rename(id, name string) { s.edit(id, func(f *File) { f.Name = name }) }

// Find returns the id of the first file named name in parent that user can read, "" when there
// is none.
func (s *Server) Find(name, parent, user string) string { return s.find(name, parent, user, "") }

// find is Find of a file of type mime ("": any).
func (s *Server) find(name, parent, user, mime string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.order {
		f := s.files[id]
		if f != nil && f.Name == name && !f.Trashed && !f.Hidden[user] && len(f.Parents) > 0 && f.Parents[0] == parent &&
			(mime == "" || f.MimeType == mime) {
			return id
		}
	}
	return ""
}
