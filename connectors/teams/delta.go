package teams

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// The cursor maps each organizer's object id to the @odata.deltaLink that ends its last delta
// round, as gzipped JSON in base64 (links share most of their text), prefixed with its format.
const cursorPrefix = "teamsv1:"

func encodeCursor(links map[string]string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	json.NewEncoder(zw).Encode(links)
	zw.Close()
	return cursorPrefix + base64.RawStdEncoding.EncodeToString(b.Bytes())
}

// decodeCursor reads a cursor; "" is an empty one. A cursor of another format is an error
// rather than a silent full resync.
func decodeCursor(c string) (map[string]string, error) {
	links := map[string]string{}
	if c == "" {
		return links, nil
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(c, cursorPrefix))
	if !strings.HasPrefix(c, cursorPrefix) || err != nil {
		return nil, fmt.Errorf("teams cursor: unknown format %.12q", c)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err == nil {
		var body []byte
		if body, err = io.ReadAll(zr); err == nil {
			err = json.Unmarshal(body, &links)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("teams cursor: %w", err)
	}
	return links, nil
}

// deltaURL starts a delta round of the recordings of the meetings organized by id, from start.
func (s *Source) deltaURL(id string, start time.Time) string {
	return fmt.Sprintf("%s/v1.0/users/%s/onlineMeetings/getAllRecordings(meetingOrganizerUserId='%s',startDateTime=%s)/delta",
		s.cfg.GraphURL, url.PathEscape(id), id, start.UTC().Format(time.RFC3339))
}

// expired reports whether err says a delta token can no longer be used: 410 Gone, or an error
// code such as syncStateNotFound.
func expired(err error) bool {
	e := asGraph(err)
	if e == nil {
		return false
	}
	switch strings.ToLower(e.Code) {
	case "syncstatenotfound", "syncstateinvalid", "resyncrequired":
		return true
	}
	return e.Status == http.StatusGone
}

// delta runs one delta round of org's recordings from link (empty: from start), following
// @odata.nextLink, and returns the recordings and the round's @odata.deltaLink. An expired
// link starts again from start: what was taken already is listed again, under the same item
// and version, so the store takes it once.
func (s *Source) delta(ctx context.Context, org user, link string, start time.Time) ([]connectors.Recording, string, error) {
	first := s.deltaURL(org.ID, start)
	if link == "" {
		link = first
	}
	resynced := false
	var out []connectors.Recording
	for {
		var page struct {
			Value []callRecording `json:"value"`
			Next  string          `json:"@odata.nextLink"`
			Delta string          `json:"@odata.deltaLink"`
		}
		err := s.api.do(ctx, call{op: "recordings of " + org.String(), method: http.MethodGet, url: link,
			forbidden: func(m string) string { return needPolicy(org.String(), m, needRecordings) }}, &page)
		if err != nil && !resynced && link != first && expired(err) {
			s.warn("delta token expired; syncing again from start_date (nothing is uploaded twice)", org.String(), err)
			link, out, resynced = first, nil, true
			continue
		}
		if err != nil {
			return nil, "", err
		}
		for _, cr := range page.Value {
			if r, ok := recording(cr, org, false); ok {
				out = append(out, r)
			}
		}
		switch {
		case page.Delta != "":
			return out, page.Delta, nil
		case page.Next == "":
			return nil, "", fmt.Errorf("graph recordings of %s: a page with neither @odata.nextLink nor @odata.deltaLink", org)
		}
		link = page.Next
	}
}

// walk runs a delta round for each organizer from its link in links (none: from start) and,
// with ad_hoc_calls, lists its ad hoc calls since the last sweep (sweepCalls), calling progress
// after each. An organizer Graph refuses (402, 403, 404: no access policy, no Teams licence, a
// metered quota spent) is skipped with a warning while others are read, its state kept for the
// next sweep; the error is returned when no organizer's meetings could be read. It returns the
// recordings and the new links.
func (s *Source) walk(ctx context.Context, links map[string]string, start time.Time, progress func(done, total int)) ([]connectors.Recording, map[string]string, error) {
	orgs, err := s.organizers(ctx)
	if err != nil {
		return nil, nil, err
	}
	now := s.cfg.Now()
	var out []connectors.Recording
	next := map[string]string{}
	var refused, callsRefused []string
	var first, firstCalls error
	for i, org := range orgs {
		recs, link, err := s.delta(ctx, org, links[org.ID], start)
		switch {
		case err == nil:
			out, next[org.ID] = append(out, recs...), link
		case !refusal(err):
			return nil, nil, err
		default:
			refused, first = append(refused, org.String()), cmpErr(first, err)
			if links[org.ID] != "" {
				next[org.ID] = links[org.ID]
			}
		}
		if s.cfg.AdHocCalls {
			calls, err := s.sweepCalls(ctx, org, links, next, start, now)
			switch {
			case err == nil:
				out = append(out, calls...)
			case !refusal(err):
				return nil, nil, err
			default:
				callsRefused, firstCalls = append(callsRefused, org.String()), cmpErr(firstCalls, err)
			}
		}
		if progress != nil {
			progress(i+1, len(orgs))
		}
	}
	if len(refused) > 0 && len(refused) == len(orgs) {
		return nil, nil, first
	}
	s.warnRefused("organizers skipped: Graph refused their recordings", refused, len(orgs), first)
	s.warnRefused("organizers' ad hoc calls skipped: Graph refused them", callsRefused, len(orgs), firstCalls)
	return out, next, nil
}

// warnRefused warns that Graph refused some of total organizers, naming the first five.
func (s *Source) warnRefused(what string, refused []string, total int, err error) {
	if len(refused) > 0 {
		s.warn(fmt.Sprintf("%d of %d %s", len(refused), total, what), strings.Join(refused[:min(len(refused), 5)], ", "), err)
	}
}

// refusal reports whether err is Graph refusing an organizer's recordings for good: 402, 403
// or 404.
func refusal(err error) bool {
	e := asGraph(err)
	return e != nil && (e.Status == http.StatusPaymentRequired || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound)
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// List returns the recordings added since cursor: per organizer, the delta round from its
// stored @odata.deltaLink (the first from start_date), and the new links as the cursor. It
// fails when the cursor is not one of this source's, when the organizers cannot be resolved,
// or when Graph refuses every organizer (a *GraphError whose 403 names what is missing); a
// 429 or 5xx fails only once the retries (Retry-After honoured) are spent.
func (s *Source) List(ctx context.Context, cursor string) ([]connectors.Recording, string, error) {
	links, err := decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	start, _ := s.cfg.start(s.cfg.Now())
	recs, next, err := s.walk(ctx, links, start, nil)
	if err != nil {
		return nil, "", err
	}
	return recs, encodeCursor(next), nil
}

// Backfill lists every recording from the given date, one delta round per organizer, progress
// counting organizers (connectors.Backfiller). It fails as List does.
func (s *Source) Backfill(ctx context.Context, from time.Time, progress func(done, total int)) ([]connectors.Recording, error) {
	recs, _, err := s.walk(ctx, nil, from, progress)
	return recs, err
}
