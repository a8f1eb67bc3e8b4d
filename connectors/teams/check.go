package teams

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// payFix says what a 402 from Graph means and what to do about it.
const payFix = "Graph asks for the billing of a metered API. Since 2025-08-25 Microsoft no longer meters the Teams recording APIs " +
	"and they need no billing set-up (https://learn.microsoft.com/graph/teams-licenses); an app registration left in evaluation mode, " +
	"a national cloud or a later change can still answer 402: set up metered billing for the app " +
	"(https://learn.microsoft.com/graph/metered-api-setup) or ask Microsoft support. Meanwhile the jobs it refuses wait, held, " +
	"tried again daily and at once on bridge jobs release"

// Check implements connectors.Checker: a token is issued, the organizers can be listed or
// resolved (User.Read.All; GroupMember.Read.All for groups, whose members come back without
// mail when User.Read.All is missing: a warning), one organizer's recordings can be read
// (OnlineMeetingRecording.Read.All and the application access policy) and, when one was made in
// the last day, its content is answered (a 402 is a metered API's quota); with ad_hoc_calls, its
// ad hoc calls can be listed (CallRecordings.Read.All: a warning). Each refusal is returned
// with its fix (connectors.NeedsSetup).
func (s *Source) Check(ctx context.Context) ([]string, error) {
	if _, err := s.api.tokens.get(ctx); err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("token issued for app %s in tenant %s", s.cfg.ClientID, s.cfg.TenantID)}
	orgs, err := s.organizers(ctx)
	if err != nil {
		return lines, s.setup(err)
	}
	lines = append(lines, fmt.Sprintf("%d organizer(s) to sync", len(orgs)))
	s.mu.Lock()
	bare := s.bare
	s.mu.Unlock()
	if bare != "" {
		lines = append(lines, connectors.Warning(bare+": their recordings' owners cannot be mapped by e-mail", fixBare))
	}
	start := s.cfg.Now().Add(-24 * time.Hour)
	var first error
	for _, org := range orgs[:min(len(orgs), 5)] { // with all, the first users may have no Teams
		recs, _, err := s.delta(ctx, org, "", start)
		if err != nil {
			first = cmpErr(first, err)
			continue
		}
		first = nil
		lines = append(lines, "recordings of "+org.String()+" can be read")
		if len(recs) > 0 {
			if err := s.probe(ctx, recs[len(recs)-1]); err != nil {
				return lines, s.setup(err)
			}
			lines = append(lines, "the content of "+org.String()+"'s latest recording is served")
		}
		lines = append(lines, s.checkCalls(ctx, org, start)...)
		break
	}
	if first != nil {
		return lines, s.setup(first)
	}
	if s.push == nil {
		lines = append(lines, "no notifications.public_url: recordings arrive by sweep only")
	} else {
		lines = append(lines, "change notifications go to "+s.push.url+" (bridge run subscribes once its server listens)")
	}
	return lines, nil
}

// probe asks for a recording's content and reads none of it: Graph refuses the content, not
// the listing, when a metered API's quota is spent (402).
func (s *Source) probe(ctx context.Context, r connectors.Recording) error {
	wh := where{org: user{ID: r.Fields["organizer_id"], Mail: r.Fields["organizer_email"]}, meeting: r.Fields["meeting_id"], call: r.Fields["call_id"]}
	rc, err := s.content(ctx, wh, r.ItemID)
	if err != nil {
		return err
	}
	return rc.Close()
}

// checkCalls says whether org's ad hoc calls can be listed, with ad_hoc_calls: a refusal is a
// warning (the meetings are still synced).
func (s *Source) checkCalls(ctx context.Context, org user, start time.Time) []string {
	if !s.cfg.AdHocCalls {
		return nil
	}
	_, err := s.adhoc(ctx, org, start, s.cfg.Now())
	if err == nil {
		return []string{"ad hoc call recordings of " + org.String() + " can be read"}
	}
	problem, fix, ok := connectors.SetupFix(s.setup(err))
	if !ok {
		problem, fix = err.Error(), "see the error; ad hoc calls are not synced meanwhile"
	}
	return []string{connectors.Warning("ad_hoc_calls: "+problem, fix)}
}

// setup names the fix of a Graph refusal: a 402's meaning, the application access policy's
// PowerShell (with this app's client id), the permission a 403 lacks; the problem then no
// longer says what is missing, the fix does. Other errors are returned as they are.
func (s *Source) setup(err error) error {
	e := asGraph(err)
	if e == nil {
		return err
	}
	var fix string
	switch {
	case e.Status == http.StatusPaymentRequired:
		fix = payFix
	case e.Status != http.StatusForbidden:
		return err
	case strings.Contains(strings.ToLower(e.Message), "application access policy"):
		fix = strings.ReplaceAll(policyFix, "<client_id>", s.cfg.ClientID)
	case e.Missing != "":
		fix = "grant the app registration " + strings.SplitN(e.Missing, ", and ", 2)[0]
	default:
		return err
	}
	return connectors.NeedsSetup(&problem{msg: strings.Replace(err.Error(), " (needs "+e.Missing+")", "", 1), err: err}, fix)
}

// problem is err said without what its fix says.
type problem struct {
	msg string
	err error
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.err }
