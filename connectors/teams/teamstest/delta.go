package teamstest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"time"
)

// state is what a skip or delta token encodes: the organizer and start of the view, the
// epoch it was issued in, the recordings it covers (added after After, up to Upto) and the
// offset of the next page.
type state struct {
	Organizer string `json:"o"`
	Start     string `json:"s"`
	Epoch     int    `json:"e"`
	After     int    `json:"a"`
	Upto      int    `json:"u"`
	Offset    int    `json:"f"`
}

func (st state) token() string {
	b, _ := json.Marshal(st)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseState(tok string) (state, bool) {
	var st state
	b, err := base64.RawURLEncoding.DecodeString(tok)
	return st, err == nil && json.Unmarshal(b, &st) == nil
}

// deltaBase is the delta function's URL for a view, under base (the host the client called).
func deltaBase(base, organizer, start string) string {
	fn := "getAllRecordings(meetingOrganizerUserId='" + organizer + "'"
	if start != "" {
		fn += ",startDateTime=" + start
	}
	return base + "/v1.0/users/" + organizer + "/onlineMeetings/" + fn + ")/delta"
}

// delta answers one page of a delta round: the initial request (no token) covers every
// recording so far; $skiptoken continues a round; $deltatoken starts the next one, with what
// was added since. A token of an older epoch has expired.
func (s *Server) delta(w http.ResponseWriter, r *http.Request, organizer, start string) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := state{Organizer: organizer, Start: start, Epoch: s.epoch, Upto: s.seq}
	if tok := q.Get("$skiptoken") + q.Get("$deltatoken"); tok != "" {
		var ok bool
		if st, ok = parseState(tok); !ok || st.Organizer != organizer {
			graphError(w, http.StatusBadRequest, "BadRequest", "The token is not valid.")
			return
		}
		if st.Epoch < s.epoch {
			s.expired(w, hostBase(r), organizer, start)
			return
		}
		if q.Has("$deltatoken") {
			st = state{Organizer: organizer, Start: st.Start, Epoch: s.epoch, After: st.Upto, Upto: s.seq}
		}
	}
	from, err := time.Parse(time.RFC3339, st.Start)
	if st.Start == "" {
		from, err = time.Time{}, nil
	}
	if err != nil {
		graphError(w, http.StatusBadRequest, "BadRequest", "startDateTime is not a DateTimeOffset: "+st.Start)
		return
	}
	var match []*Recording
	for _, x := range s.recs {
		if x.CallID == "" && x.Organizer == organizer && x.seq > st.After && x.seq <= st.Upto && !x.Created.Before(from) {
			match = append(match, x)
		}
	}
	sort.Slice(match, func(i, j int) bool { return match[i].seq < match[j].seq })
	end := min(st.Offset+s.PageSize, len(match))
	value := []map[string]any{}
	for _, x := range match[min(st.Offset, len(match)):end] {
		value = append(value, view(hostBase(r), x))
	}
	page := map[string]any{"@odata.context": hostBase(r) + "/v1.0/$metadata#Collection(callRecording)", "value": value}
	base := deltaBase(hostBase(r), organizer, st.Start)
	if end < len(match) {
		st.Offset = end
		page["@odata.nextLink"] = base + "?$skiptoken=" + url.QueryEscape(st.token())
	} else {
		page["@odata.deltaLink"] = base + "?$deltatoken=" + url.QueryEscape(state{Organizer: organizer, Start: st.Start, Epoch: s.epoch, Upto: st.Upto}.token())
	}
	writeJSON(w, http.StatusOK, page)
}

// expired answers a token that can no longer be used, as set by ExpireDeltaTokens.
func (s *Server) expired(w http.ResponseWriter, base, organizer, start string) {
	if s.expiry == "syncStateNotFound" {
		graphError(w, http.StatusBadRequest, "syncStateNotFound", "The sync state generation is not found. The delta token is expired and data must be synchronized again.")
		return
	}
	w.Header().Set("Location", deltaBase(base, organizer, start)+"?$deltatoken=")
	graphError(w, http.StatusGone, "resyncRequired", "Resync required. Replace any local cached data with data from the server.")
}
