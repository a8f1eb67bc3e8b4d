package zoom

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// sweep lists the recordings of the meetings started from from to to (days, both included),
// window by window (windowDays), calling progress after each listing. With users: all it lists
// the account's recordings, one call a window; without the scope for that (or with users
// named), user by user. At an error it returns what it found and the first day of the window
// it could not list (resume): at Zoom's daily limit (a *dailyLimitError), the caller keeps
// them.
func (s *Source) sweep(ctx context.Context, from, to time.Time, progress func(done, total int)) (recs []connectors.Recording, resume time.Time, err error) {
	ws := windows(from, to)
	perUser := !s.everyone() || s.noAccountList()
	var users []user
	if perUser {
		if users, err = s.sweptUsers(ctx); err != nil {
			return nil, from, err
		}
	}
	total, done := len(ws), 0
	if perUser {
		total = len(ws) * len(users)
	}
	step := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	var emails map[string]string // host id → e-mail, for the account-wide list's rare meeting without one
	for i, w := range ws {
		span := w[0].Format("2006-01-02") + ".." + w[1].Format("2006-01-02")
		if !perUser {
			ms, err := s.accountMeetings(ctx, w)
			switch {
			case missingScope(err):
				s.setNoAccountList()
				s.warn("zoom refused the account-wide recordings list: sweeping user by user, one call per user and window",
					"error", err, "fix", addScopeFix(scopeAccountRecordings))
				if users, err = s.sweptUsers(ctx); err != nil {
					return recs, w[0], err
				}
				perUser, total, done = true, len(ws)*len(users), i*len(users)
			case err != nil:
				return recs, w[0], fmt.Errorf("sweep %s: %w", span, err)
			default:
				if emails == nil && missingEmail(ms) {
					emails = s.hostEmails(ctx)
				}
				for _, m := range ms {
					if m.HostEmail == "" {
						m.HostEmail = emails[m.HostID]
					}
					recs = s.take(recs, m)
				}
				step()
				continue
			}
		}
		for _, u := range users {
			ms, err := s.userMeetings(ctx, u, w)
			if err != nil {
				return recs, w[0], fmt.Errorf("sweep %s %s: %w", u.ID, span, err)
			}
			for _, m := range ms {
				recs = s.take(recs, m)
			}
			step()
		}
	}
	return recs, time.Time{}, nil
}

// take adds m's recording to recs when m has a file to take.
func (s *Source) take(recs []connectors.Recording, m meeting) []connectors.Recording {
	if f, ok := pick(m, s.cfg.FileTypes); ok {
		recs = append(recs, recording(s.cfg.AccountID, m, f, m.HostEmail))
	}
	return recs
}

// sweptUsers returns the users to sweep one by one: every user of the account, or the
// configured ones Zoom knows (those it does not are skipped with a warning).
func (s *Source) sweptUsers(ctx context.Context) ([]user, error) {
	if s.everyone() {
		return s.accountUsers(ctx)
	}
	found, missing, err := s.configuredUsers(ctx)
	if len(missing) > 0 {
		s.warn("zoom does not know these users: their recordings are not swept", "users", missing)
	}
	return found, err
}

func missingEmail(ms []meeting) bool {
	for _, m := range ms {
		if m.HostEmail == "" {
			return true
		}
	}
	return false
}

// hostEmails maps the account's users to their e-mails; empty, with a warning, when they
// cannot be listed (the owners then have no e-mail).
func (s *Source) hostEmails(ctx context.Context) map[string]string {
	out := map[string]string{}
	users, err := s.accountUsers(ctx)
	if err != nil {
		s.warn("cannot list users to fill in the hosts' e-mails", "error", err)
	}
	for _, u := range users {
		out[u.ID] = u.Email
	}
	return out
}

// List sweeps the last SweepDays days, and from further back the days a sweep still owes (the
// cursor: the first day the next sweep must list), within the six months Zoom lists; webhooks
// are the fast path. At Zoom's daily limit the sweep does not fail: it returns what it listed,
// with the first day it could not list as cursor, and until the limit resets (00:00 UTC) List
// asks Zoom nothing and returns the cursor as it is.
func (s *Source) List(ctx context.Context, cursor string) ([]connectors.Recording, string, error) {
	now := s.cfg.Now().UTC()
	if until := s.pausedUntil(); now.Before(until) {
		s.debug("zoom's daily limit is spent: the sweep waits for its reset", "reset", until.Format(time.RFC3339))
		return nil, cursor, nil
	}
	regular := dayOf(now).AddDate(0, 0, -s.cfg.SweepDays)
	from := regular
	if owed, err := time.Parse("2006-01-02", cursor); err == nil && owed.Before(from) {
		from = owed
	}
	if oldest := oldestListed(now); from.Before(oldest) {
		s.warnUnlisted(from, oldest)
		from = oldest
	}
	recs, resume, err := s.sweep(ctx, from, dayOf(now), nil)
	var limit *dailyLimitError
	if errors.As(err, &limit) {
		s.pause(limit.until)
		s.warn("zoom's daily limit is spent: the sweep stops and resumes after the reset from the first day it did not list",
			"reset", limit.until.Format(time.RFC3339), "resumes_from", resume.Format("2006-01-02"), "found", len(recs))
		return recs, resume.Format("2006-01-02"), nil
	}
	if err != nil {
		return nil, "", err
	}
	return recs, regular.Format("2006-01-02"), nil
}

// Backfill walks history from the given date in windows of 28 days (connectors.Backfiller).
// Zoom lists about six months back: from further back it warns, naming the days it cannot
// list. At Zoom's daily limit it stops and returns what it found with an error naming the
// date to backfill from once the limit has reset.
func (s *Source) Backfill(ctx context.Context, from time.Time, progress func(done, total int)) ([]connectors.Recording, error) {
	now := s.cfg.Now().UTC()
	from = dayOf(from)
	if oldest := oldestListed(now); from.Before(oldest) {
		s.warnUnlisted(from, oldest)
	}
	recs, resume, err := s.sweep(ctx, from, dayOf(now), progress)
	var limit *dailyLimitError
	if errors.As(err, &limit) {
		return recs, fmt.Errorf("zoom's daily limit is spent: stopped with %d recording(s) found; after %s, backfill again --from %s",
			len(recs), limit.until.Format(time.RFC3339), resume.Format("2006-01-02"))
	}
	return recs, err
}

// warnUnlisted warns that the meetings from from to the day before oldest are beyond what Zoom
// lists.
func (s *Source) warnUnlisted(from, oldest time.Time) {
	s.warn("zoom lists recordings of about the last six months only: the meetings of these days cannot be listed (download them from the Zoom web portal)",
		"from", from.Format("2006-01-02"), "to", oldest.AddDate(0, 0, -1).Format("2006-01-02"))
}

func (s *Source) pausedUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

func (s *Source) pause(until time.Time) {
	s.mu.Lock()
	s.paused = until
	s.mu.Unlock()
}

func (s *Source) noAccountList() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noAccountScope
}

func (s *Source) setNoAccountList() {
	s.mu.Lock()
	s.noAccountScope = true
	s.mu.Unlock()
}
