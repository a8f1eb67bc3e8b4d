package gdrivetest

import (
	"crypto"
	"crypto/md5"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"
)

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// apiError writes Drive's error shape.
func apiError(w http.ResponseWriter, code int, reason, msg string) {
	domain := "global"
	if strings.Contains(reason, "RateLimit") || strings.Contains(reason, "rateLimit") {
		domain = "usageLimits"
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]string{{"domain": domain, "reason": reason, "message": msg}}}})
}

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
	if strings.HasPrefix(r.URL.Path, "/drive/v3/files/") {
		s.PerFile++
	}
	user, ok := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	var fault int
	if ok && len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	switch {
	case !ok:
		apiError(w, http.StatusUnauthorized, "authError", "Request had invalid authentication credentials.")
		return
	case fault == http.StatusForbidden:
		apiError(w, fault, "userRateLimitExceeded", "User rate limit exceeded.")
		return
	case fault == http.StatusTooManyRequests:
		apiError(w, fault, "rateLimitExceeded", "Rate limit exceeded.")
		return
	case fault != 0:
		apiError(w, fault, "backendError", "Backend Error")
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
		s.changeList(w, q)
	case path == "/about":
		writeJSON(w, drive.About{Kind: "drive#about", User: &drive.User{Kind: "drive#user", EmailAddress: user}})
	case strings.HasPrefix(path, "/drives/"):
		s.sharedDrive(w, strings.TrimPrefix(path, "/drives/"))
	case strings.HasPrefix(path, "/files/"):
		s.get(w, q, strings.TrimPrefix(path, "/files/"))
	default:
		apiError(w, http.StatusNotFound, "notFound", "Not Found: "+r.URL.Path)
	}
}

// token checks a service account's signed JWT and issues an access token for its subject.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		http.Error(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`, http.StatusBadRequest)
		return
	}
	var claims struct {
		Sub, Scope string
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(body, &claims)
	if !strings.Contains(claims.Scope, "drive") {
		http.Error(w, `{"error":"invalid_scope"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	tok := fmt.Sprintf("ya29.fake-%d", len(s.tokens)+1)
	s.tokens[tok] = claims.Sub
	s.mu.Unlock()
	writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
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
		apiError(w, http.StatusBadRequest, "invalid", "Invalid Value: "+err.Error())
		return
	}
	driveID := first(q, "driveId")
	if driveID != "" && (first(q, "supportsAllDrives") != "true" || first(q, "includeItemsFromAllDrives") != "true") {
		apiError(w, http.StatusNotFound, "notFound", "Shared drive not found: "+driveID)
		return
	}
	size, _ := strconv.Atoi(first(q, "pageSize"))
	if size <= 0 || size > 1000 {
		size = 100
	}
	offset := 0
	if tok := first(q, "pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || !strings.HasPrefix(string(b), "o=") {
			apiError(w, http.StatusBadRequest, "invalid", "Invalid Value: pageToken")
			return
		}
		offset, _ = strconv.Atoi(strings.TrimPrefix(string(b), "o="))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*drive.File
	for _, id := range s.order {
		f := s.files[id]
		if f == nil || f.DriveID != driveID || !expr(f, user) {
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
	writeJSON(w, out)
}

func (s *Server) changeList(w http.ResponseWriter, q map[string][]string) {
	from, err := strconv.Atoi(first(q, "pageToken"))
	if err != nil || from < 1 {
		apiError(w, http.StatusBadRequest, "invalid", "Invalid Value: pageToken")
		return
	}
	size, _ := strconv.Atoi(first(q, "pageSize"))
	if size <= 0 || size > 1000 {
		size = 100
	}
	driveID := first(q, "driveId")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := drive.ChangeList{Kind: "drive#changeList", Changes: []*drive.Change{}}
	i := from - 1
	for ; i < len(s.changes) && len(out.Changes) < size; i++ {
		c := s.changes[i]
		if c.driveID != driveID {
			continue
		}
		ch := &drive.Change{Kind: "drive#change", ChangeType: "file", FileId: c.fileID, Removed: c.removed}
		if f := s.files[c.fileID]; f != nil && !c.removed {
			ch.File = trim(apiFile(f), map[string][]string{"fields": {"*"}})
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
	writeJSON(w, out)
}

func (s *Server) get(w http.ResponseWriter, q map[string][]string, id string) {
	s.mu.Lock()
	f := s.files[id]
	var content []byte
	var meta *drive.File
	abusive := false
	if f != nil {
		content, meta, abusive = f.Content, apiFile(f), f.Abusive
	}
	s.mu.Unlock()
	switch {
	case f == nil:
		apiError(w, http.StatusNotFound, "notFound", "File not found: "+id+".")
	case first(q, "alt") != "media":
		writeJSON(w, trim(meta, q))
	case meta.MimeType == FolderMime:
		apiError(w, http.StatusForbidden, "fileNotDownloadable", "Only files with binary content can be downloaded.")
	case abusive && first(q, "acknowledgeAbuse") != "true":
		apiError(w, http.StatusForbidden, "cannotDownloadAbusiveFile", "This file has been identified as malware or spam and cannot be downloaded.")
	default:
		w.Header().Set("Content-Type", meta.MimeType)
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
	}
}

// sharedDrive answers drives.get for a drive that holds files.
func (s *Server) sharedDrive(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		if f.DriveID == id {
			writeJSON(w, drive.Drive{Kind: "drive#drive", Id: id, Name: "Shared " + id})
			return
		}
	}
	apiError(w, http.StatusNotFound, "notFound", "Shared drive not found: "+id)
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
