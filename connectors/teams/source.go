// Package teams is the Microsoft Teams meeting recordings source, through Microsoft Graph: per
// organizer, the getAllRecordings delta function (its @odata.deltaLink is the cursor) as the
// sweep and backfill, and, when notifications are set, Graph change notifications on
// communications/onlineMeetings/getAllRecordings for real time, the subscription kept alive by
// the source itself. It registers itself as type "teams".
package teams

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/transcript-bridge/bridge/connectors"
)

// Source is a Teams source.
type Source struct {
	cfg Config
	api *client
	// Log receives warnings (default: discarded).
	Log *slog.Logger
	// push is the change-notification state; nil when notifications are not set.
	push *push

	mu    sync.Mutex
	users map[string]user // by object id: organizers seen, for the owners of pushed recordings
	scope map[string]bool // the configured organizers' ids, once resolved (nil: not yet)
	bare  string          // groups whose members came back without mail (noteBare), or ""
}

var (
	_ connectors.Source     = (*Source)(nil)
	_ connectors.Backfiller = (*Source)(nil)
	_ connectors.Checker    = (*Source)(nil)
	_ connectors.Pusher     = (*PushSource)(nil)
)

// New builds a source; nothing is called until List, Open, Check or Subscribe. Unset fields
// take their defaults (SetDefaults). It fails on a bad config (an *connectors.OptionError
// naming the option) or an unreadable or empty secret file.
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
	s := &Source{cfg: cfg, api: newClient(cfg), users: map[string]user{}}
	if cfg.Notifications["public_url"] != "" {
		s.push = newPush(cfg)
	}
	return s, nil
}

// SetLogger sets where the source's warnings go (the bridge's logger).
func (s *Source) SetLogger(l *slog.Logger) { s.Log = l }

func (s *Source) warn(msg, about string, err error) {
	if s.Log != nil {
		s.Log.Warn(msg, "source", s.cfg.Name, "about", about, "error", err)
	}
}

func (s *Source) info(msg string, args ...any) {
	if s.Log != nil {
		s.Log.Info(msg, append([]any{"source", s.cfg.Name}, args...)...)
	}
}

// isStatus reports whether err is a Graph refusal with this HTTP status.
func isStatus(err error, status int) bool {
	var e *GraphError
	return errors.As(err, &e) && e.Status == status
}
