// Package zoom is the Zoom cloud recordings source: recording.completed webhooks for real time,
// and a sweep of every user's recordings (one-month windows) as backstop and backfill. It
// registers itself as type "zoom".
package zoom

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// Source is a Zoom source.
type Source struct {
	cfg Config
	api *client
	// Log receives warnings (default: discarded).
	Log *slog.Logger

	mu       sync.Mutex
	dlTokens map[string]dlToken // by item: webhook download tokens, memory only
}

type dlToken struct {
	token string
	at    time.Time
}

var (
	_ connectors.Source     = (*Source)(nil)
	_ connectors.Finisher   = (*Source)(nil)
	_ connectors.Backfiller = (*Source)(nil)
	_ connectors.Checker    = (*Source)(nil)
	_ connectors.Pusher     = (*Source)(nil)
)

// New builds a source; nothing is called until List, Open or a webhook. Unset fields take
// their defaults (SetDefaults). It fails on a bad config (an *connectors.OptionError naming the
// option) or an unreadable or empty secret file.
func New(cfg Config) (*Source, error) {
	cfg.SetDefaults()
	err := cfg.Validate()
	if err == nil {
		err = cfg.readSecrets()
	}
	if err != nil {
		return nil, err
	}
	cfg.normalize()
	return &Source{cfg: cfg, api: newClient(cfg), dlTokens: map[string]dlToken{}}, nil
}

// SetLogger sets where the source's warnings go (the bridge's logger).
func (s *Source) SetLogger(l *slog.Logger) { s.Log = l }

func (s *Source) log(msg, item string, err error) {
	if s.Log != nil {
		s.Log.Warn(msg, "item", item, "err", err)
	}
}

// Finish applies after_upload (trash or delete) to the uploaded file once its transcript is
// done; nothing otherwise.
func (s *Source) Finish(ctx context.Context, r connectors.Recording, outcome connectors.Outcome) error {
	if s.cfg.AfterUpload == "keep" || outcome != connectors.OutcomeDone {
		return nil
	}
	uuid, fileID, ok := strings.Cut(r.ItemID, "/")
	for ok && strings.Contains(fileID, "/") { // UUIDs may hold "/": the file id is the last part
		var rest string
		rest, fileID, _ = strings.Cut(fileID, "/")
		uuid += "/" + rest
	}
	if r.Fields["meeting_uuid"] != "" {
		uuid, fileID = r.Fields["meeting_uuid"], r.Fields["file_id"]
	}
	err := s.api.call(ctx, light, s.cfg.AfterUpload+" recording file", http.MethodDelete,
		"/meetings/"+meetingPath(uuid)+"/recordings/"+url.PathEscape(fileID), url.Values{"action": {s.cfg.AfterUpload}}, nil)
	if isStatus(err, http.StatusNotFound) {
		return nil // already gone
	}
	if err != nil {
		return fmt.Errorf("after_upload %s: %w", s.cfg.AfterUpload, err)
	}
	return nil
}

// Check implements connectors.Checker: the OAuth app answers, and users and recordings can be
// listed (scopes user:read:admin and recording:read:admin, or their granular forms).
func (s *Source) Check(ctx context.Context) ([]string, error) {
	if _, err := s.api.tokens.get(ctx); err != nil {
		return nil, fmt.Errorf("%w (check account_id, client_id and the client secret)", err)
	}
	lines := []string{"OAuth token issued for account " + s.cfg.AccountID}
	users, err := s.users(ctx)
	if err != nil {
		return lines, fmt.Errorf("list users: %w (scope user:read:admin needed)", err)
	}
	lines = append(lines, fmt.Sprintf("%d user(s) to sweep", len(users)))
	if len(users) > 0 {
		now := s.cfg.Now().UTC()
		if _, err := s.meetings(ctx, users[0], [2]time.Time{now.AddDate(0, 0, -1), now}); err != nil {
			return lines, fmt.Errorf("list recordings: %w (scope recording:read:admin needed)", err)
		}
		lines = append(lines, "recordings can be listed")
	}
	if s.cfg.WebhookSecret == "" {
		lines = append(lines, "no webhook_secret_file: recordings arrive by sweep only")
	}
	return lines, nil
}
