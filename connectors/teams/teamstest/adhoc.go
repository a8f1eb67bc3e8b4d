package teamstest

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// adhocFn is adhocCall: getAllRecordings with its function parameters: userId (required; the
// docs quote it as a string, their example does not), startDateTime and endDateTime (optional)
// (https://learn.microsoft.com/graph/api/adhoccall-getallrecordings).
var adhocFn = regexp.MustCompile(`^getAllRecordings\((.*)\)$`)

// adhocCalls answers the recordings of the ad hoc calls one user started: GET
// /users/{id}/adhocCalls/getAllRecordings(userId=…,startDateTime=…,endDateTime=…), a recording
// (GET /users/{id}/adhocCalls/{callId}/recordings/{id}) and its content (…/content), as
// https://learn.microsoft.com/graph/api/callrecording-get lists them. The application
// permission is CallRecordings.Read.All, and the user needs an application access policy as for
// meetings (https://learn.microsoft.com/graph/cloud-communication-adhoc-call-application-access-policy).
// Graph documents no delta for ad hoc calls and no per-call list: a segment after the function
// is refused as Graph refuses an unknown one.
func (s *Server) adhocCalls(w http.ResponseWriter, r *http.Request, organizer string, p []string) {
	if s.refuseRecordings(w, organizer, PermCallRecordings) {
		return
	}
	if m := adhocFn.FindStringSubmatch(p[0]); m != nil {
		if len(p) > 1 {
			graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+p[1]+"'.")
			return
		}
		params := functionParams(m[1])
		switch user := strings.Trim(params["userId"], "'"); {
		case user == "":
			graphError(w, http.StatusBadRequest, "BadRequest", "userId is required.")
		case user != organizer:
			graphError(w, http.StatusForbidden, "Forbidden", "The userId does not match the user in the path.")
		default:
			s.count("adhoc")
			s.adhocPage(w, r, organizer, params["startDateTime"], params["endDateTime"])
		}
		return
	}
	if len(p) < 3 || p[1] != "recordings" || len(p) > 4 || len(p) == 4 && p[3] != "content" {
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Join(p, "/")+"'.")
		return
	}
	rec := s.find(func(x *Recording) bool { return x.ID == p[2] && x.CallID == p[0] && x.Organizer == organizer })
	s.recording(w, r, rec, len(p) == 4)
}

// functionParams splits an OData function's parameters: name=value,name='value'.
func functionParams(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// adhocPage answers a page of a user's ad hoc call recordings created in [start, end), oldest
// first, from $skiptoken, with the @odata.nextLink of the next and the total as @odata.count.
func (s *Server) adhocPage(w http.ResponseWriter, r *http.Request, organizer, start, end string) {
	var from, to time.Time
	for _, b := range []struct {
		raw string
		t   *time.Time
	}{{start, &from}, {end, &to}} {
		if b.raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, b.raw)
		if err != nil {
			graphError(w, http.StatusBadRequest, "BadRequest", "The parameter is not a valid DateTimeOffset: "+b.raw)
			return
		}
		*b.t = t
	}
	s.mu.Lock()
	var match []*Recording
	for _, x := range s.recs {
		if x.CallID != "" && x.Organizer == organizer && !x.Created.Before(from) && (to.IsZero() || x.Created.Before(to)) {
			match = append(match, x)
		}
	}
	size := s.PageSize
	s.mu.Unlock()
	sort.Slice(match, func(i, j int) bool { return match[i].Created.Before(match[j].Created) })
	off, _ := strconv.Atoi(r.URL.Query().Get("$skiptoken"))
	end2 := min(off+size, len(match))
	value := []map[string]any{}
	for _, x := range match[min(off, len(match)):end2] {
		value = append(value, view(hostBase(r), x))
	}
	page := map[string]any{"@odata.context": hostBase(r) + "/v1.0/$metadata#users('" + organizer + "')/adhocCalls",
		"@odata.count": len(match), "value": value}
	if end2 < len(match) {
		page["@odata.nextLink"] = hostBase(r) + r.URL.EscapedPath() + "?" + url.Values{"$skiptoken": {strconv.Itoa(end2)}}.Encode()
	}
	writeJSON(w, http.StatusOK, page)
}
