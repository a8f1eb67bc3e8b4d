package teams

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// The cursor keeps, beside each organizer's delta link, when its last ad hoc call listing
// ended, under adhocKey and the organizer's id, in RFC 3339.
const adhocKey = "adhoc:"

// adhocOverlap is how far before the end of the last listing the next one starts: a recording
// is listed some time after the call ended, with its createdDateTime, so the day before is
// listed again (the store takes a recording once, under its item and version).
const adhocOverlap = 24 * time.Hour

// adhocURL lists the recordings of the ad hoc calls user id started, created in [from, to):
// adhocCall: getAllRecordings (https://learn.microsoft.com/graph/api/adhoccall-getallrecordings:
// GET /users/{usersId}/adhocCalls/getAllRecordings with the function parameters userId,
// required, and startDateTime and endDateTime). Graph documents no delta form of it.
func (s *Source) adhocURL(id string, from, to time.Time) string {
	return fmt.Sprintf("%s/v1.0/users/%s/adhocCalls/getAllRecordings(userId='%s',startDateTime=%s,endDateTime=%s)",
		s.cfg.GraphURL, url.PathEscape(id), id, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
}

// adhoc returns the recordings of org's ad hoc calls created in [from, to), following
// @odata.nextLink.
func (s *Source) adhoc(ctx context.Context, org user, from, to time.Time) ([]connectors.Recording, error) {
	var out []connectors.Recording
	for link := s.adhocURL(org.ID, from, to); link != ""; {
		var page struct {
			Value []callRecording `json:"value"`
			Next  string          `json:"@odata.nextLink"`
		}
		err := s.api.do(ctx, call{op: "ad hoc call recordings of " + org.String(), method: http.MethodGet, url: link,
			forbidden: func(m string) string { return needPolicy(org.String(), m, needCalls) }}, &page)
		if err != nil {
			return nil, err
		}
		for _, cr := range page.Value {
			if r, ok := recording(cr, org, true); ok {
				out = append(out, r)
			}
		}
		link = page.Next
	}
	return out, nil
}

// sweepCalls lists org's ad hoc call recordings since its last listing in links (at most
// adhocOverlap before it; none: from start) up to now, and records now in next. A failure keeps
// the last listing's end, so the next sweep looks at that window again.
func (s *Source) sweepCalls(ctx context.Context, org user, links, next map[string]string, start, now time.Time) ([]connectors.Recording, error) {
	key := adhocKey + org.ID
	from := start
	if last, err := time.Parse(time.RFC3339Nano, links[key]); err == nil && last.Add(-adhocOverlap).After(from) {
		from = last.Add(-adhocOverlap)
	}
	recs, err := s.adhoc(ctx, org, from, now)
	if err != nil {
		if links[key] != "" {
			next[key] = links[key]
		}
		return nil, err
	}
	next[key] = now.UTC().Format(time.RFC3339Nano)
	return recs, nil
}
