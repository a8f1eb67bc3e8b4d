// Package meet is the Google Meet source: the Meet REST API v2 (google.golang.org/api/meet/v2)
// lists the conferences each configured user organized or attended and their recordings, as
// that user (a service account with domain-wide delegation); a recording whose file Meet has
// generated is read from Drive by its file id (gdrive.Reader), so a recording reached through
// this source and through a gdrive source is the same item, with the same DedupeKey, and makes
// one job. It registers itself as type "meet".
package meet

import (
	"context"
	"fmt"
	"io"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	meetapi "google.golang.org/api/meet/v2"
	"google.golang.org/api/option"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/internal/httpenv"
)

// Source is a Google Meet source.
type Source struct {
	cfg   Config
	meet  map[string]*meetapi.Service // by user
	drive *gdrive.Reader
}

var _ connectors.Source = (*Source)(nil)

// New builds a Meet client and a Drive reader per user. Unset fields take their defaults
// (SetDefaults). It fails on a bad config (an *connectors.OptionError naming the option) or a
// key that is not a service account's; nothing is called until List.
func New(ctx context.Context, cfg Config) (*Source, error) {
	cfg.SetDefaults()
	err := cfg.Validate()
	if err == nil {
		err = cfg.readCredentials()
	}
	if err != nil {
		return nil, err
	}
	jwt, err := google.JWTConfigFromJSON(cfg.Credentials, meetapi.MeetingsSpaceReadonlyScope)
	if err != nil {
		return nil, &connectors.OptionError{Key: "credentials_file", Err: fmt.Errorf("a service-account key is needed to impersonate users: %w", err)}
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	// Token requests and API calls honour HTTPS_PROXY, HTTP_PROXY and NO_PROXY; token refreshes
	// outlive the caller.
	tokenCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, httpenv.Client(0))
	s := &Source{cfg: cfg, meet: map[string]*meetapi.Service{}}
	for _, u := range cfg.Users {
		as := *jwt
		as.Subject = u
		svc, err := meetapi.NewService(ctx, option.WithHTTPClient(as.Client(tokenCtx)), option.WithEndpoint(cfg.APIURL))
		if err != nil {
			return nil, fmt.Errorf("meet client for %s: %w", u, err)
		}
		s.meet[u] = svc
	}
	s.drive, err = gdrive.NewReader(ctx, gdrive.Config{Credentials: cfg.Credentials, Subjects: cfg.Users, Endpoint: cfg.DriveURL,
		MaxAttempts: cfg.MaxAttempts, MinBackoff: cfg.MinBackoff, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// List returns the recordings of the conferences that ended since cursor (the first time,
// since start_date) and those whose files Meet has generated since, one per recording whichever
// users were in the conference (gdrive.Dedupe: the organizer's own reading when they are a
// user).
func (s *Source) List(ctx context.Context, cursor string) ([]connectors.Recording, string, error) {
	cur, err := decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	now := s.cfg.Now()
	var out []connectors.Recording
	for _, u := range s.cfg.Users {
		st, ok := cur.Users[u]
		if !ok {
			st.Since, _ = s.cfg.start(now)
		}
		recs, next, err := s.sweep(ctx, u, st, now)
		if err != nil {
			return nil, "", fmt.Errorf("as %s: %w", u, err)
		}
		cur.Users[u] = next
		out = append(out, recs...)
	}
	return gdrive.Dedupe(out), encodeCursor(cur), nil
}

// Open downloads a recording from Drive as the user who listed it (gdrive.Reader.Open: the
// version checked, failures classified as the gdrive source classifies them).
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	if r.Unavailable != "" {
		return nil, fmt.Errorf("meet recording %s: %s", r.ItemID, r.Unavailable)
	}
	return s.drive.Open(ctx, r)
}
