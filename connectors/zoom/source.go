// Package zoom is the Zoom cloud recordings source: recording.completed webhooks for real time,
// and a sweep of the account's recordings (or the configured users') in windows of 28 days as
// backstop and backfill. It registers itself as type "zoom".
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
	resolved map[string]user    // by users entry: the user's id and e-mail, as Zoom gave them
	paused   time.Time          // Zoom's daily limit is spent until then: the sweep waits
	// noAccountScope: the token may not list the account's recordings; sweeps go user by user.
	noAccountScope bool
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
	return &Source{cfg: cfg, api: newClient(cfg), dlTokens: map[string]dlToken{}, resolved: map[string]user{}}, nil
}

// SetLogger sets where the source's warnings go (the bridge's logger).
func (s *Source) SetLogger(l *slog.Logger) { s.Log = l }

func (s *Source) log(msg, item string, err error) {
	s.warn(msg, "item", item, "error", err)
}

// warn logs a warning with attributes (key, value pairs).
func (s *Source) warn(msg string, args ...any) {
	if s.Log != nil {
		s.Log.Warn(msg, args...)
	}
}

// debug logs at DEBUG, for what is done on purpose and only worth seeing when looking for it.
func (s *Source) debug(msg string, args ...any) {
	if s.Log != nil {
		s.Log.Debug(msg, args...)
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
	if missingScope(err) {
		return fmt.Errorf("after_upload %s: %w (fix: %s)", s.cfg.AfterUpload, err, addScopeFix(scopeDelete))
	}
	if err != nil {
		return fmt.Errorf("after_upload %s: %w", s.cfg.AfterUpload, err)
	}
	return nil
}
