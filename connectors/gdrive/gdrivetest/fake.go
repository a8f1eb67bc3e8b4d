// Package gdrivetest is a local fake of the Google Drive v3 API for tests, speaking its wire
// format: an OAuth token endpoint for service-account JWTs (impersonation included),
// files.list with a subset of the query language, corpora and opaque page tokens, files.get
// with alt=media, the changes feed, shared drives (whose items only callers that send
// supportsAllDrives and includeItemsFromAllDrives see, as Drive does), Drive's documented and
// recorded error answers (testdata/), and injected throttling and refusals; the fields
// parameter (fields.go), shortcuts and lost access (shortcut.go), tokens scoped and delegated
// as Google issues them (token.go), and the layouts in which Google Meet files its recordings
// (meet.go). The real client library (google.golang.org/api/drive/v3) is pointed at it.
package gdrivetest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/drive/v3"
)

// FolderMime is Drive's folder type.
const FolderMime = "application/vnd.google-apps.folder"

// googleApps begins the types of Google's own files (Docs, folders, shortcuts), which hold no
// downloadable content.
const googleApps = "application/vnd.google-apps."

// File is a stored file or folder.
type File struct {
	ID, Name, MimeType string
	Parents            []string
	Content            []byte
	// Owner is the owning user's e-mail (empty in a shared drive); LastModifier is set always.
	Owner, LastModifier string
	DriveID             string
	Trashed, Abusive    bool
	// Refusal is the reason Drive gives when the file is downloaded (RefuseDownload); empty
	// when it is served.
	Refusal  string
	Modified time.Time
	Rev      int
	// Target is, for a shortcut (ShortcutMime), the id of the file it points to, and
	// TargetMime that file's type when the shortcut was made (Shortcut).
	Target, TargetMime string
	// Hidden are the users who cannot read the file (Unshare): to them it does not exist.
	Hidden map[string]bool
}

type change struct {
	fileID  string
	removed bool
	driveID string
}

// Server is the fake. Its methods change the content; every change lands in the feed.
type Server struct {
	URL string

	mu      sync.Mutex
	files   map[string]*File
	order   []string
	changes []change
	faults  []string          // reasons of the next answers (Fail, FailWith)
	drives  map[string]string // shared drive id → name (NameDrive)
	tokens  map[string]grant  // access token → who and what for
	// delegated are the scopes domain-wide delegation grants (Delegate); nil: any.
	delegated []string
	key       *rsa.PrivateKey
	next      int
	Requests  int // API requests served (not counting the token endpoint)
	// PerFile counts the API requests about one file that is not a folder (files.get, by
	// metadata or download).
	PerFile int
	// Latency is waited before serving each request (token endpoint included); set it before
	// the first request.
	Latency time.Duration
}

// Counts returns Requests and PerFile, read under the server's lock.
func (s *Server) Counts() (requests, perFile int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Requests, s.PerFile
}

// Start serves a fake on loopback until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, stop, err := Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s
}

// Serve serves a fake on loopback until stop is called (Start, outside a test: bridge bench).
// It fails only when the service-account key cannot be generated.
func Serve() (s *Server, stop func(), err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("gdrivetest: key: %w", err)
	}
	s = &Server{files: map[string]*File{}, drives: map[string]string{}, tokens: map[string]grant{}, key: key}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = srv.URL
	return s, srv.Close, nil
}

// ServiceAccountJSON is a service-account key whose token_uri is this server.
func (s *Server) ServiceAccountJSON() []byte {
	der := x509.MarshalPKCS1PrivateKey(s.key)
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "fake", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})),
		"client_email": "bridge@fake.iam.gserviceaccount.com", "client_id": "1", "token_uri": s.URL + "/token",
	})
	return b
}

// Root is the id of user's My Drive root folder.
func Root(user string) string { return "root-" + user }

func (s *Server) add(f *File) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	f.ID = fmt.Sprintf("f%04dX", s.next)
	f.Modified, f.Rev = time.Now().UTC(), 1
	if f.LastModifier == "" {
		f.LastModifier = f.Owner
	}
	s.files[f.ID] = f
	s.order = append(s.order, f.ID)
	s.changes = append(s.changes, change{fileID: f.ID, driveID: f.DriveID})
	return f.ID
}

// NameDrive names the shared drive id (drives.get answers it); a shared drive is the driveID
// its items are put with, and its id is also the id of its top folder, the parent of the
// items at its top. Unnamed, drives.get calls it "Shared <id>" once it holds an item.
func (s *Server) NameDrive(id, name string) {
	s.mu.Lock()
	s.drives[id] = name
	s.mu.Unlock()
}

// Folder creates a folder in parent owned by owner (driveID for a shared drive) and returns its id.
func (s *Server) Folder(name, parent, owner, driveID string) string {
	return s.add(&File{Name: name, MimeType: FolderMime, Parents: []string{parent}, Owner: owner, DriveID: driveID})
}

// Put creates a file and returns its id.
func (s *Server) Put(name, mime, parent, owner, driveID string, content []byte) string {
	return s.add(&File{Name: name, MimeType: mime, Parents: []string{parent}, Owner: owner, DriveID: driveID, Content: content})
}

// Update changes a file's content (a new revision and checksum).
func (s *Server) Update(id string, content []byte) {
	s.edit(id, func(f *File) { f.Content = content; f.Rev++ })
}

// Move puts a file or folder into another parent.
func (s *Server) Move(id, parent string) { s.edit(id, func(f *File) { f.Parents = []string{parent} }) }

// Trash moves a file to the trash.
func (s *Server) Trash(id string) { s.edit(id, func(f *File) { f.Trashed = true }) }

// Modify records email as the file's last modifier (with a new revision).
func (s *Server) Modify(id, email string) {
	s.edit(id, func(f *File) { f.LastModifier = email; f.Rev++ })
}

// SetAbusive flags a file as abusive: downloads need acknowledgeAbuse=true.
func (s *Server) SetAbusive(id string) { s.edit(id, func(f *File) { f.Abusive = true }) }

// RefuseDownload makes downloads of a file answer Drive's refusal for reason (ReasonDownloadQuota,
// ReasonCannotDownload, …) while its metadata is still served, as Drive does; "" serves it
// again (a download quota renewed).
func (s *Server) RefuseDownload(id, reason string) {
	if _, ok := driveErrors[reason]; !ok && reason != "" {
		panic("gdrivetest: no recorded answer for reason " + reason)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[id]; f != nil {
		f.Refusal = reason
	}
}

// Delete removes a file for good.
func (s *Server) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[id]; f != nil {
		delete(s.files, id)
		s.changes = append(s.changes, change{fileID: id, removed: true, driveID: f.DriveID})
	}
}

func (s *Server) edit(id string, fn func(*File)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[id]
	if f == nil {
		panic("gdrivetest: no file " + id)
	}
	fn(f)
	f.Modified = time.Now().UTC()
	s.changes = append(s.changes, change{fileID: id, driveID: f.DriveID})
}

// Fail answers the next API requests with these statuses, in order: 403 as
// userRateLimitExceeded, 429 as rateLimitExceeded, others as backendError (with that status).
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range statuses {
		switch st {
		case 403:
			s.faults = append(s.faults, ReasonUserRateLimit)
		case 429:
			s.faults = append(s.faults, ReasonRateLimit)
		default:
			s.faults = append(s.faults, ReasonBackend+"/"+strconv.Itoa(st))
		}
	}
}

// FailWith answers the next API requests with Drive's error for each reason, in order
// (ReasonDomainPolicy, ReasonDailyLimit, …).
func (s *Server) FailWith(reasons ...string) {
	for _, r := range reasons {
		if _, ok := driveErrors[r]; !ok {
			panic("gdrivetest: no recorded answer for reason " + r)
		}
	}
	s.mu.Lock()
	s.faults = append(s.faults, reasons...)
	s.mu.Unlock()
}

// apiFile renders f as Drive does.
func apiFile(f *File) *drive.File {
	out := &drive.File{Kind: "drive#file", Id: f.ID, Name: f.Name, MimeType: f.MimeType, Parents: f.Parents, Trashed: f.Trashed,
		DriveId: f.DriveID, CreatedTime: f.Modified.Format(time.RFC3339Nano), ModifiedTime: f.Modified.Format(time.RFC3339Nano),
		WebViewLink: "https://drive.google.com/file/d/" + f.ID + "/view"}
	if !strings.HasPrefix(f.MimeType, googleApps) { // blob files only: Docs, folders and shortcuts have no content of their own
		out.Size = int64(len(f.Content))
		out.Md5Checksum = md5hex(f.Content)
		out.HeadRevisionId = strconv.Itoa(f.Rev)
	}
	if f.Target != "" {
		out.ShortcutDetails = &drive.FileShortcutDetails{TargetId: f.Target, TargetMimeType: f.TargetMime}
	}
	if f.Owner != "" {
		out.Owners = []*drive.User{{Kind: "drive#user", EmailAddress: f.Owner, PermissionId: permissionID(f.Owner), DisplayName: displayName(f.Owner)}}
	}
	if f.LastModifier != "" {
		out.LastModifyingUser = &drive.User{Kind: "drive#user", EmailAddress: f.LastModifier, PermissionId: permissionID(f.LastModifier),
			DisplayName: displayName(f.LastModifier)}
	}
	return out
}

// displayName is the user's name as Drive shows it: here the e-mail's local part.
func displayName(email string) string {
	name, _, _ := strings.Cut(email, "@")
	return name
}

func permissionID(email string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(email))[:10]
}
