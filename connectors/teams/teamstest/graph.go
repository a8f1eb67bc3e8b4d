package teamstest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.wait(r) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	for i, p := range parts {
		parts[i], _ = url.PathUnescape(p)
	}
	switch {
	case len(parts) == 4 && parts[1] == "oauth2" && parts[2] == "v2.0" && parts[3] == "token":
		s.token(w, r, parts[0])
	case parts[0] == "download" && len(parts) == 2:
		s.file(w, r, parts[1])
	case parts[0] == "v1.0":
		s.api(w, r, parts[1:])
	default:
		graphError(w, http.StatusNotFound, "UnknownError", "no such path: "+r.URL.Path)
	}
}

// wait holds a request while the fake is paused (the download URLs excepted); false when the
// client gave up meanwhile.
func (s *Server) wait(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/download/") {
		return true
	}
	s.mu.Lock()
	gate := s.gate
	if gate != nil {
		s.held++
	}
	s.mu.Unlock()
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-r.Context().Done():
		return false
	}
}

// token is the identity platform's token endpoint, client-credentials grant with the client
// secret in the form.
func (s *Server) token(w http.ResponseWriter, r *http.Request, tenant string) {
	r.ParseForm()
	f := r.PostForm
	switch {
	case r.Method != http.MethodPost || tenant != TenantID:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": "AADSTS90002: Tenant '" + tenant + "' not found."})
	case f.Get("grant_type") != "client_credentials":
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type", "error_description": "AADSTS70003: The app requested an unsupported grant type."})
	case f.Get("client_id") != ClientID || f.Get("client_secret") != ClientSecret:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
	case !validScope(f.Get("scope")):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_scope", "error_description": "AADSTS70011: The provided value for scope is not valid."})
	default:
		s.mu.Lock()
		s.issued++
		tok := "eyJ0eXAiOiJKV1QiLCJub25jZSI6Im" + strconv.Itoa(s.issued)
		s.tokens[tok] = true
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
	}
}

// api answers the Graph API under /v1.0 after the token, the throttling and the permissions.
func (s *Server) api(w http.ResponseWriter, r *http.Request, p []string) {
	s.mu.Lock()
	ok := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	var status int
	var ra string
	switch {
	case !ok:
		status = http.StatusUnauthorized
	case len(s.limited) > 0:
		status, ra, s.limited = http.StatusTooManyRequests, s.limited[0], s.limited[1:]
	case len(s.busy) > 0:
		status, ra, s.busy = http.StatusServiceUnavailable, s.busy[0], s.busy[1:]
	}
	s.mu.Unlock()
	if ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	switch status {
	case http.StatusUnauthorized:
		graphError(w, status, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.")
		return
	case http.StatusTooManyRequests:
		graphError(w, status, "TooManyRequests", "Too many requests.")
		return
	case http.StatusServiceUnavailable:
		graphError(w, status, "serviceNotAvailable", "The service is temporarily unavailable.")
		return
	}
	switch {
	case p[0] == "users":
		s.users1(w, r, p[1:])
	case p[0] == "groups":
		s.groups1(w, r, p[1:])
	case p[0] == "subscriptions":
		s.subscriptions(w, r, p[1:])
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+p[0]+"'.")
	}
}

var deltaFn = regexp.MustCompile(`^getAllRecordings\(meetingOrganizerUserId='([^']*)'(?:,startDateTime=([^,)]*))?\)$`)

// meetings answers the recordings of one organizer: the delta function, a recording, its
// content.
func (s *Server) meetings(w http.ResponseWriter, r *http.Request, organizer string, p []string) {
	if s.refuseRecordings(w, organizer, PermRecordings) {
		return
	}
	if len(p) == 2 && p[1] == "delta" {
		m := deltaFn.FindStringSubmatch(p[0])
		switch {
		case m == nil || m[1] == "":
			graphError(w, http.StatusBadRequest, "BadRequest", "meetingOrganizerUserId is required.")
		case m[1] != organizer:
			graphError(w, http.StatusForbidden, "Forbidden", "The meetingOrganizerUserId does not match the user in the path.")
		default:
			s.count("delta")
			s.delta(w, r, organizer, m[2])
		}
		return
	}
	if len(p) < 3 || p[1] != "recordings" || len(p) > 4 || len(p) == 4 && p[3] != "content" {
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Join(p, "/")+"'.")
		return
	}
	rec := s.find(func(x *Recording) bool {
		return x.ID == p[2] && x.MeetingID == p[0] && x.CallID == "" && x.Organizer == organizer
	})
	s.recording(w, r, rec, len(p) == 4)
}

// refuseRecordings answers 403 when the app lacks permission (OnlineMeetingRecording.Read.All,
// or CallRecordings.Read.All for ad hoc calls) or organizer has no application access policy
// (https://learn.microsoft.com/graph/cloud-communication-online-meeting-application-access-policy:
// with application permissions "tenant administrators must configure an application access
// policy"; Graph's words for its absence are those of
// https://github.com/microsoftgraph/msgraph-sdk-dotnet/issues/2350: code General, "No
// application access policy found for this app."), and reports whether it did.
func (s *Server) refuseRecordings(w http.ResponseWriter, organizer, permission string) bool {
	if s.refused(permission) {
		graphError(w, http.StatusForbidden, "Forbidden", "Missing role permissions on the request. API requires one of '"+permission+"'. Roles on the request ''.")
		return true
	}
	s.mu.Lock()
	nopolicy := s.policy[organizer]
	s.mu.Unlock()
	if nopolicy {
		graphError(w, http.StatusForbidden, "General", NoPolicyMessage)
	}
	return nopolicy
}

// NoPolicyMessage is Graph's error.message when the organizer has no application access
// policy granting the app.
const NoPolicyMessage = "No application access policy found for this app."

// PaymentMessage is Graph's error.message of the 402 PaymentRequired a metered API answered
// past its evaluation capacity
// (https://learn.microsoft.com/en-us/answers/questions/2337314: the content request of a
// recording, "Evaluation capacity for the month has exceeded").
const PaymentMessage = "Evaluation capacity for the month has exceeded. To continue beyond the evaluation limits complete billing onboarding."

// find returns the recording match accepts, or nil.
func (s *Server) find(match func(*Recording) bool) *Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.recs {
		if match(x) {
			return x
		}
	}
	return nil
}

// recording answers a recording's metadata or, with content, its content: a 302 to a
// pre-authenticated URL, or the 402 of PaymentRequired.
func (s *Server) recording(w http.ResponseWriter, r *http.Request, rec *Recording, content bool) {
	s.mu.Lock()
	payment := s.payment
	s.mu.Unlock()
	switch {
	case rec == nil:
		graphError(w, http.StatusNotFound, "NotFound", "The recording was not found.")
	case !content:
		s.count("recording")
		writeJSON(w, http.StatusOK, view(hostBase(r), rec))
	case payment:
		s.count("content")
		graphError(w, http.StatusPaymentRequired, "PaymentRequired", PaymentMessage)
	default:
		s.count("content")
		sig := base64.RawURLEncoding.EncodeToString([]byte(rec.ID + "|" + strconv.FormatInt(time.Now().UnixNano(), 36)))
		http.Redirect(w, r, s.URL+"/download/"+sig, http.StatusFound)
	}
}

// hostBase is the base URL of the host the client called (Graph's links point back to it).
func hostBase(r *http.Request) string { return "http://" + r.Host }

// validScope is the Graph resource's .default scope: Microsoft's, or the fake's own under
// whatever host the client knows it by.
func validScope(scope string) bool {
	u, err := url.Parse(scope)
	return scope == "https://graph.microsoft.com/.default" || err == nil && u.Host != "" && u.Path == "/.default"
}

func (s *Server) refused(permission string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked[permission]
}

func (s *Server) count(kind string) {
	s.mu.Lock()
	s.Calls[kind]++
	s.mu.Unlock()
}

// view is a recording as Graph returns it, its content URL under base: for a meeting as the
// delta function lists it (https://learn.microsoft.com/graph/api/callrecording-delta), for an
// ad hoc call as adhocCall: getAllRecordings does, with callId and no meetingId
// (https://learn.microsoft.com/graph/api/adhoccall-getallrecordings).
func view(base string, r *Recording) map[string]any {
	organizer := map[string]any{"application": nil, "device": nil, "user": map[string]any{
		"@odata.type": "#microsoft.graph.teamworkUserIdentity", "id": r.Organizer, "displayName": nil,
		"userIdentityType": "aadUser", "tenantId": TenantID}}
	if r.CallID != "" {
		return map[string]any{"id": r.ID, "callId": r.CallID, "contentCorrelationId": r.ContentCorrelationID,
			"createdDateTime": r.Created.Format("2006-01-02T15:04:05.0000000Z"), "endDateTime": r.End.Format("2006-01-02T15:04:05.0000000Z"),
			"recordingContentUrl": base + "/v1.0/users/" + r.Organizer + "/adhocCalls/" + r.CallID + "/recordings/" + r.ID + "/content",
			"meetingOrganizer":    organizer}
	}
	return map[string]any{"@odata.type": "#microsoft.graph.callRecording", "id": r.ID, "meetingId": r.MeetingID,
		"callId": nil, "contentCorrelationId": r.ContentCorrelationID,
		"createdDateTime": r.Created.Format("2006-01-02T15:04:05.0000000Z"), "endDateTime": r.End.Format("2006-01-02T15:04:05.0000000Z"),
		"recordingContentUrl": base + "/v1.0/users/" + r.Organizer + "/onlineMeetings/" + r.MeetingID + "/recordings/" + r.ID + "/content",
		"meetingOrganizer":    organizer}
}

// file answers the pre-authenticated download URL a content request redirects to.
func (s *Server) file(w http.ResponseWriter, r *http.Request, sig string) {
	raw, _ := base64.RawURLEncoding.DecodeString(sig)
	id, _, _ := strings.Cut(string(raw), "|")
	s.mu.Lock()
	s.Downloads++
	if r.Header.Get("Authorization") != "" {
		s.DownloadsWithToken++
	}
	var rec *Recording
	for _, x := range s.recs {
		if x.ID == id {
			rec = x
		}
	}
	var fault string
	var content []byte
	if rec != nil {
		fault, rec.Fault, content = rec.Fault, "", rec.Content
	}
	s.mu.Unlock()
	switch {
	case rec == nil:
		http.NotFound(w, r)
	case fault == "429" || fault == "503":
		w.Header().Set("Retry-After", map[string]string{"429": "7", "503": "120"}[fault])
		code, _ := strconv.Atoi(fault)
		graphError(w, code, "TooManyRequests", "Please retry again later.")
	case fault == "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>Sign in to your account</body></html>"))
	case fault == "short":
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content[:len(content)/2]) // the connection closes early
	default:
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// graphError answers as Graph refuses a request: its error resource, {"error": {"code",
// "message", "innerError": {"date", "request-id", "client-request-id"}}}, as JSON, with the
// request-id and client-request-id headers the innerError repeats
// (https://learn.microsoft.com/graph/errors: "Errors in Microsoft Graph are returned using
// standard HTTP status codes, and a JSON error response object"; the recorded answers in
// testdata show the headers).
func graphError(w http.ResponseWriter, status int, code, msg string) {
	id := requestID()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", id)
	w.Header().Set("client-request-id", id)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg,
		"innerError": map[string]any{"date": time.Now().UTC().Format("2006-01-02T15:04:05"), "request-id": id, "client-request-id": id}}})
}

// requestID is a request id as Graph makes them: a random GUID.
func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
