// Package gdrive is the Google Drive source (google.golang.org/api/drive/v3): a folder
// (recursively), a shared drive, or each user's Google Meet folders under domain-wide
// delegation (the "Google Meet" folder and the legacy "Meet Recordings" one: meet.go), shortcuts
// followed to the files they point to. A full listing comes first and then periodically; in
// between, the changes feed. It registers itself as type "gdrive"; its Reader reads Drive files
// by id for other Google sources (meet).
package gdrive

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"
	"google.golang.org/api/option"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/httpenv"
)

// Source is a Google Drive source.
type Source struct {
	cfg   Config
	users map[string]*drive.Service // by subject ("" for the credentials' own identity)
}

var _ connectors.Source = (*Source)(nil)

// New builds one Drive client per subject. Unset fields take their defaults (SetDefaults). It
// fails on a bad config (an *connectors.OptionError naming the option) or unreadable
// credentials; nothing is called until List.
func New(ctx context.Context, cfg Config) (*Source, error) {
	cfg.SetDefaults()
	err := cfg.Validate()
	if err == nil {
		err = cfg.readCredentials()
	}
	if err != nil {
		return nil, err
	}
	return build(ctx, cfg)
}

// build makes one Drive client per subject of cfg, whose credentials are read.
func build(ctx context.Context, cfg Config) (*Source, error) {
	cfg.Subjects = cfg.subjects()
	s := &Source{cfg: cfg, users: map[string]*drive.Service{}}
	for _, subject := range cfg.Subjects {
		hc, err := httpClient(ctx, cfg.Credentials, subject)
		if err != nil {
			return nil, err
		}
		opts := []option.ClientOption{option.WithHTTPClient(hc)}
		if cfg.Endpoint != "" {
			opts = append(opts, option.WithEndpoint(endpoint(cfg.Endpoint)))
		}
		svc, err := drive.NewService(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("drive client for %q: %w", subject, err)
		}
		s.users[subject] = svc
	}
	return s, nil
}

// endpoint accepts a server root or the full API base and returns the API base.
func endpoint(e string) string {
	e = strings.TrimSuffix(e, "/")
	if !strings.HasSuffix(e, "/drive/v3") {
		e += "/drive/v3"
	}
	return e + "/"
}

// httpClient authenticates as a service account (impersonating subject when set), as an OAuth
// user with a refresh token, or with Application Default Credentials. Token requests and API
// calls honour HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
func httpClient(ctx context.Context, creds []byte, subject string) (*http.Client, error) {
	ctx = context.WithoutCancel(ctx) // token refreshes outlive the caller
	ctx = context.WithValue(ctx, oauth2.HTTPClient, httpenv.Client(0))
	if creds == nil {
		c, err := google.DefaultClient(ctx, drive.DriveReadonlyScope)
		if err != nil {
			return nil, fmt.Errorf("option credentials_file: none given and no default credentials: %w", err)
		}
		return c, nil
	}
	var kind struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(creds, &kind); err != nil {
		return nil, fmt.Errorf("option credentials_file: not a JSON key: %w", err)
	}
	if kind.Type == "service_account" {
		jwt, err := google.JWTConfigFromJSON(creds, drive.DriveReadonlyScope)
		if err != nil {
			return nil, fmt.Errorf("option credentials_file: %w", err)
		}
		jwt.Subject = subject
		return jwt.Client(ctx), nil
	}
	if subject != "" {
		return nil, fmt.Errorf("option subject: impersonation needs a service-account key, not %q credentials", kind.Type)
	}
	if kind.Type != string(google.AuthorizedUser) {
		return nil, fmt.Errorf("option credentials_file: type %q is neither service_account nor authorized_user", kind.Type)
	}
	c, err := google.CredentialsFromJSONWithType(ctx, creds, google.AuthorizedUser, drive.DriveReadonlyScope)
	if err != nil {
		return nil, fmt.Errorf("option credentials_file: %w", err)
	}
	return oauth2.NewClient(ctx, c.TokenSource), nil
}

// List returns the recordings found since cursor: everything on a full pass (the first one,
// then every FullEvery), else what the changes feed reports in scope; shortcuts stand for their
// targets, one recording per file version whichever subjects list it (shortcut.go).
func (s *Source) List(ctx context.Context, cursor string) ([]connectors.Recording, string, error) {
	cur, err := decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	var out []connectors.Recording
	for _, subject := range s.cfg.Subjects {
		u := &user{src: s, svc: s.users[subject], subject: subject, state: cur.Users[subject]}
		recs, err := u.list(ctx)
		if err != nil {
			if subject != "" {
				err = fmt.Errorf("as %s: %w", subject, err)
			}
			return nil, "", err
		}
		cur.Users[subject] = u.state
		out = append(out, recs...)
	}
	return Dedupe(out), encodeCursor(cur), nil
}

// Open downloads the file with alt=media after checking it is still the listed version. After
// the throttling retries, 429, 5xx, 403 rate limits, network failures and a body shorter than
// the file are transient errors (connectors.ErrTransient); a spent download quota
// (downloadQuotaExceeded, a day) and refusals about the account hold the job
// (connectors.ErrBlocked, refusal.go); 404, other 403s (no access, cannotDownloadFile, a file
// flagged as abusive), a trashed or changed file are permanent.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	svc := s.users[r.Fields["subject"]]
	if svc == nil {
		svc = s.users[s.cfg.Subjects[0]]
	}
	var f *drive.File
	err := s.retry(ctx, func() (err error) {
		f, err = svc.Files.Get(r.ItemID).SupportsAllDrives(true).Fields(fileFields).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, s.classify(ctx, fmt.Errorf("drive file %s: %w", r.ItemID, err))
	}
	if f.Trashed {
		return nil, fmt.Errorf("drive file %s: in the trash", r.ItemID)
	}
	if v := version(f); v != r.Version {
		return nil, fmt.Errorf("drive file %s: changed since it was listed (version %s, want %s)", r.ItemID, v, r.Version)
	}
	var resp *http.Response
	err = s.retry(ctx, func() (err error) {
		resp, err = svc.Files.Get(r.ItemID).SupportsAllDrives(true).AcknowledgeAbuse(s.cfg.AcknowledgeAbuse).Context(ctx).Download()
		return err
	})
	if err != nil {
		return nil, s.classify(ctx, fmt.Errorf("download drive file %s: %w", r.ItemID, err))
	}
	return connectors.ExactBody(resp.Body, f.Size, "download drive file "+r.ItemID), nil
}
