package zoomtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) findFile(id string) *File {
	for _, m := range s.meetings {
		for _, f := range m.RecordingFiles {
			if f.ID == id {
				return f
			}
		}
	}
	return nil
}

// download answers a download_url: a 302 to the file for a valid token, else 401.
func (s *Server) download(w http.ResponseWriter, r *http.Request, id string) {
	if _, ok := s.bearer(r, true); !ok {
		zoomError(w, http.StatusUnauthorized, 124, "Invalid access token.")
		return
	}
	s.mu.Lock()
	f := s.findFile(id)
	s.mu.Unlock()
	if f == nil {
		zoomError(w, http.StatusNotFound, 3301, "This recording does not exist.")
		return
	}
	http.Redirect(w, r, s.URL+"/files/"+id+"?sig=signed-"+strconv.FormatInt(time.Now().UnixNano(), 36), http.StatusFound)
}

// file serves a file behind the redirect, or the fault set for it. Zoom documents no answer of
// its own for a download refused for payment or a licence: the 402 and the 403 are the generic
// Zoom error body ({"code", "message"}, https://developers.zoom.us/docs/api/errors/: "403
// Forbidden: User does not have permission…"), the 403 naming the missing licence. A download
// over the daily limit is answered as the API's is (limits.go).
func (s *Server) file(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	s.Downloads++
	f := s.findFile(id)
	var fault string
	var content []byte
	var midnight time.Time
	if f != nil {
		fault, f.Fault, content = f.Fault, "", f.Content
		if fault == "" {
			fault = f.Always
		}
		now := s.now().UTC()
		midnight = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
	}
	s.mu.Unlock()
	switch {
	case f == nil || !strings.HasPrefix(r.URL.Query().Get("sig"), "signed-"):
		http.NotFound(w, r)
	case fault == "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>Sorry, this page is not available. Sign in to continue.</body></html>"))
	case fault == "503":
		w.Header().Set("Retry-After", "120")
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	case fault == "402":
		zoomError(w, http.StatusPaymentRequired, 402, "Payment required: this account's subscription has lapsed.")
	case fault == "403":
		zoomError(w, http.StatusForbidden, 200, "No permission.")
	case fault == "403-licence":
		zoomError(w, http.StatusForbidden, 200, "The host of this recording does not have a paid license.")
	case fault == "daily":
		dailyLimited(w, "Light", midnight)
	case fault == "short":
		w.Header().Set("Content-Type", "audio/mp4")
		w.Write(content[:len(content)/2]) // no Content-Length: the cut is only seen at the end
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	default:
		w.Header().Set("Content-Type", map[string]string{"M4A": "audio/mp4", "MP4": "video/mp4"}[f.FileType])
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
	}
}
