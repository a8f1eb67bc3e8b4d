package meet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("meet", func(_ string, cfg Config) (connectors.Source, error) {
		return New(context.Background(), cfg)
	})
}

// Config configures a Google Meet source (the Meet REST API, through a service account with
// domain-wide delegation). Its fields tagged koanf are the options of a source with type: meet.
type Config struct {
	// Users are the Google Workspace users (e-mails) whose meetings are synced: each is
	// impersonated, and the recordings of the conferences they organized or attended are taken
	// (one job per recording, whichever users were in it). Required.
	Users []string `koanf:"users"`
	// StartDate is how far back the first sync looks: a date (2026-01-01) or an RFC 3339 time;
	// empty: 30 days before it, as long as Meet keeps a conference record after it ends.
	StartDate string `koanf:"start_date"`
	// CredentialsFile is the service account's key (JSON), whose client ID has domain-wide
	// delegation of meetings.space.readonly and drive.readonly. Required.
	CredentialsFile string `koanf:"credentials_file"`
	// APIURL is the base URL of the Meet REST API.
	APIURL string `koanf:"api_url"`
	// DriveURL is the base URL of the Drive API, from which recordings are downloaded.
	DriveURL string `koanf:"drive_url"`
	// Credentials is the content of the key; when nil, New reads it from CredentialsFile.
	Credentials []byte
	// Overlap is how far before the last sweep each sweep looks again, for a conference
	// listed late (default an hour); conferences already taken are not read again.
	Overlap time.Duration
	// MaxAttempts bounds the tries of a throttled call (default 8).
	MaxAttempts int
	// MinBackoff is the first wait of a throttled call (default 1 s), doubled up to 32 s, with
	// full jitter.
	MinBackoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SetDefaults fills in the defaults of unset fields.
func (c *Config) SetDefaults() {
	if c.APIURL == "" {
		c.APIURL = "https://meet.googleapis.com/"
	}
	if c.DriveURL == "" {
		c.DriveURL = "https://www.googleapis.com/drive/v3/"
	}
	if c.Overlap == 0 {
		c.Overlap = time.Hour
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 8
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate returns an *connectors.OptionError naming the first option at fault, or nil.
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &connectors.OptionError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	if len(c.Users) == 0 {
		return &connectors.OptionError{Key: "users", Err: connectors.ErrRequired}
	}
	for _, u := range c.Users {
		if !strings.Contains(u, "@") {
			return bad("users", "%q is not an e-mail address (the Meet API lists a user's conferences only as that user)", u)
		}
	}
	if c.Credentials == nil {
		if err := connectors.Required("credentials_file", c.CredentialsFile); err != nil {
			return err
		}
	}
	if _, err := c.start(time.Time{}); err != nil {
		return bad("start_date", "%v", err)
	}
	if c.MaxAttempts < 0 || c.Overlap < 0 {
		return errors.New("meet: max attempts and overlap must not be negative")
	}
	return nil
}

// start is the first sync's start: StartDate, else 30 days before now.
func (c *Config) start(now time.Time) (time.Time, error) {
	if c.StartDate == "" {
		return now.Add(-retention).UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", c.StartDate); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, c.StartDate)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-01-01) nor an RFC 3339 time", c.StartDate)
	}
	return t.UTC(), nil
}

// readCredentials reads credentials_file into Credentials, unless set; the error is an
// *connectors.OptionError naming it.
func (c *Config) readCredentials() error {
	if c.Credentials != nil {
		return nil
	}
	b, err := os.ReadFile(c.CredentialsFile)
	if err != nil {
		return &connectors.OptionError{Key: "credentials_file", Err: err}
	}
	c.Credentials = b
	return nil
}
