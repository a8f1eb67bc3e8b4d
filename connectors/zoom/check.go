package zoom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// usersFix is the fix of users Zoom does not know.
const usersFix = "correct users: each an e-mail or a user id of the account (Zoom web portal, User Management, Users), or all"

// Check implements connectors.Checker (bridge doctor, bridge sources check): the app's token
// is issued, and the recordings can be listed: the account's with users: all (else user by
// user, with a warning), or each configured user's (users Zoom does not know are a warning;
// none known, an error). Each setup problem names its fix (connectors.NeedsSetup for what stops
// the source, connectors.Warning for what it will miss): a scope missing to list, the scope
// after_upload needs to trash or delete (read from the token's scopes), a sweep_days beyond
// the six months Zoom lists.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	scopes, err := s.api.tokens.scopes(ctx)
	if err != nil {
		if err = tokenErr(err); errors.Is(err, connectors.ErrTransient) {
			return nil, err
		}
		return nil, connectors.NeedsSetup(err, "check account_id, client_id and the client secret (the app's App Credentials), and that the app is activated")
	}
	lines := []string{"OAuth token issued for account " + s.cfg.AccountID}
	if s.cfg.AfterUpload != "keep" && !granted(scopes, scopeDelete) {
		lines = append(lines, connectors.Warning(fmt.Sprintf("after_upload: %s needs the scope %s, which the app's token lacks (it has %q): every %s will fail",
			s.cfg.AfterUpload, scopeNames(scopeDelete), scopes, s.cfg.AfterUpload), addScopeFix(scopeDelete)))
	}
	now := s.cfg.Now().UTC()
	probe := [2]time.Time{dayOf(now).AddDate(0, 0, -1), dayOf(now)}
	var found []string
	if s.everyone() {
		found, err = s.checkAccount(ctx, probe)
	} else {
		found, err = s.checkUsers(ctx, probe)
	}
	lines = append(lines, found...)
	if err != nil {
		return lines, err
	}
	if oldest := oldestListed(now); dayOf(now).AddDate(0, 0, -s.cfg.SweepDays).Before(oldest) {
		lines = append(lines, connectors.Warning(fmt.Sprintf("sweep_days %d reaches back beyond the six months Zoom lists recordings of: sweeps list from %s only",
			s.cfg.SweepDays, oldest.Format("2006-01-02")), fmt.Sprintf("set sweep_days to %d or less; download older recordings from the Zoom web portal",
			int(dayOf(now).Sub(oldest).Hours()/24))))
	}
	if s.cfg.WebhookSecret == "" {
		lines = append(lines, "no webhook_secret_file: recordings arrive by sweep only")
	}
	return lines, nil
}

// checkAccount checks users: all: the account's recordings can be listed; without the scope
// for that, the users and their recordings can (a warning: one call per user and window).
func (s *Source) checkAccount(ctx context.Context, probe [2]time.Time) ([]string, error) {
	_, err := s.accountMeetings(ctx, probe)
	switch {
	case err == nil:
		return []string{"the account's recordings can be listed (one call a window for every user)"}, nil
	case !missingScope(err):
		return nil, fmt.Errorf("list the account's recordings: %w", err)
	}
	users, err := s.accountUsers(ctx)
	if missingScope(err) {
		return nil, connectors.NeedsSetup(fmt.Errorf("list users: %w", err), addScopeFix(scopeListUsers))
	}
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	if len(users) > 0 {
		if _, err := s.userMeetings(ctx, users[0], probe); missingScope(err) {
			return nil, connectors.NeedsSetup(fmt.Errorf("list recordings: %w", err), addScopeFix(scopeUserRecordings))
		} else if err != nil {
			return nil, fmt.Errorf("list recordings of %s: %w", users[0].ID, err)
		}
	}
	return []string{fmt.Sprintf("%d user(s) to sweep one by one", len(users)),
		connectors.Warning("the app may not list the account's recordings (GET /accounts/me/recordings): each sweep asks Zoom once per user and window",
			addScopeFix(scopeAccountRecordings))}, nil
}

// checkUsers checks named users: Zoom knows them, and their recordings can be listed.
func (s *Source) checkUsers(ctx context.Context, probe [2]time.Time) ([]string, error) {
	found, missing, err := s.configuredUsers(ctx)
	switch {
	case missingScope(err):
		return nil, connectors.NeedsSetup(fmt.Errorf("look up users: %w", err), addScopeFix(scopeListUsers))
	case err != nil:
		return nil, fmt.Errorf("look up users: %w", err)
	case len(found) == 0:
		return nil, connectors.NeedsSetup(fmt.Errorf("zoom knows none of users: %s", strings.Join(missing, ", ")), usersFix)
	}
	if _, err := s.userMeetings(ctx, found[0], probe); missingScope(err) {
		return nil, connectors.NeedsSetup(fmt.Errorf("list recordings: %w", err), addScopeFix(scopeUserRecordings))
	} else if err != nil {
		return nil, fmt.Errorf("list recordings of %s: %w", found[0].ID, err)
	}
	lines := []string{fmt.Sprintf("%d user(s) to sweep", len(found))}
	if len(missing) > 0 {
		lines = append(lines, connectors.Warning("zoom does not know these users, whose recordings are not swept: "+strings.Join(missing, ", "), usersFix))
	}
	return lines, nil
}
