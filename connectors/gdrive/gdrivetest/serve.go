package gdrivetest

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"
)

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.Latency)
	if r.URL.Path == "/token" {
		s.token(w, r)
		return
	}
	s.mu.Lock()
	s.Requests++
	if id, ok := strings.CutPrefix(r.URL.Path, "/drive/v3/files/"); ok && (s.files[id] == nil || s.files[id].MimeType != FolderMime) {
		s.PerFile++
	}
	g, ok := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	user := g.subject
	var fault string
	if ok && len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	switch backend, status, isBackend := strings.Cut(fault, "/"); {
	case !ok: // "Resolve errors", authError
		writeError(w, "authError", driveError{status: http.StatusUnauthorized, domain: "global", message: "Invalid Credentials",
			location: "Authorization", locationType: "header"})
		return
	case !driveScope(g.scopes):
		insufficientScope(w, "drive.googleapis.com", "google.apps.drive.v3.DriveFiles."+r.Method)
		return
	case isBackend:
		e := driveErrors[backend]
		e.status, _ = strconv.Atoi(status)
		writeError(w, backend, e)
		return
	case fault != "":
		refuse(w, fault)
		return
	}
	q := r.URL.Query()
	switch path := strings.TrimPrefix(r.URL.Path, "/drive/v3"); {
	case path == "/files" && r.Method == http.MethodGet:
		s.list(w, q, user)
	case path == "/changes/startPageToken":
		s.mu.Lock()
		writeJSON(w, drive.StartPageToken{Kind: "drive#startPageToken", StartPageToken: strconv.Itoa(len(s.changes) + 1)})
		s.mu.Unlock()
	case path == "/changes":
		s.changeList(w, q, user)
	case path == "/about":
		answer(w, q, drive.About{Kind: "drive#about", User: &drive.User{Kind: "drive#user", EmailAddress: user}})
	case strings.HasPrefix(path, "/drives/"):
		s.sharedDrive(w, q, strings.TrimPrefix(path, "/drives/"))
	case strings.HasPrefix(path, "/files/"):
		s.get(w, q, strings.TrimPrefix(path, "/files/"), user)
	default:
		writeError(w, "notFound", driveError{status: http.StatusNotFound, domain: "global", message: "Not Found: " + r.URL.Path})
	}
}

// get answers files.get as user, of the metadata or (alt=media) the content. An item in a
// shared drive is not found unless supportsAllDrives=true is sent, nor an item user cannot
// read (see notFound).
func (s *Server) get(w http.ResponseWriter, q map[string][]string, id, user string) {
	s.mu.Lock()
	f := s.files[id]
	if f != nil && f.Hidden[user] {
		f = nil
	}
	var content []byte
	var meta *drive.File
	var abusive bool
	var refusal string
	if f != nil {
		content, meta, abusive, refusal = f.Content, apiFile(f), f.Abusive, f.Refusal
	}
	s.mu.Unlock()
	switch {
	case f == nil, meta.DriveId != "" && first(q, "supportsAllDrives") != "true":
		writeError(w, "notFound", notFound(id))
	case first(q, "alt") != "media":
		answer(w, q, trim(meta, q))
	case strings.HasPrefix(meta.MimeType, googleApps):
		refuse(w, "fileNotDownloadable")
	case abusive && first(q, "acknowledgeAbuse") != "true":
		refuse(w, ReasonAbusive)
	case refusal != "":
		refuse(w, refusal)
	default:
		w.Header().Set("Content-Type", meta.MimeType)
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
	}
}

// sharedDrive answers drives.get for a drive named (NameDrive) or holding items.
func (s *Server) sharedDrive(w http.ResponseWriter, q map[string][]string, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, ok := s.drives[id]
	for _, f := range s.files {
		if !ok && f.DriveID == id {
			name, ok = "Shared "+id, true
		}
	}
	if !ok {
		writeError(w, "notFound", driveError{status: http.StatusNotFound, domain: "global", message: "Shared drive not found: " + id,
			location: "driveId", locationType: "parameter"})
		return
	}
	answer(w, q, drive.Drive{Kind: "drive#drive", Id: id, Name: name})
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
