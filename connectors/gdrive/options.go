package gdrive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("gdrive", func(_ string, cfg Config) (connectors.Source, error) {
		return New(context.Background(), cfg)
	})
}

// Config configures a Google Drive source. Its fields tagged koanf are the options of a source
// with type: gdrive.
type Config struct {
	// FolderID is a folder synced recursively, in My Drive or in a shared drive (whose id is
	// read from the folder). One of folder_id, shared_drive_id and meet_recordings is required.
	FolderID string `koanf:"folder_id"`
	// SharedDriveID is a shared drive: all of it, or only folder_id within it (which must
	// then be in it).
	SharedDriveID string `koanf:"shared_drive_id"`
	// MeetRecordings syncs each subject's Google Meet folders: "Google Meet" (where Meet saves
	// since 2026-07-23, one subfolder per meeting, participants' shortcuts followed to the
	// organizer's file) and the legacy "Meet Recordings" folder (renamed by Google, followed by
	// its id once seen).
	MeetRecordings bool `koanf:"meet_recordings"`
	// Include keeps only files whose name matches one of these globs (path.Match syntax);
	// empty keeps all.
	Include connectors.Globs `koanf:"include"`
	// Exclude drops files whose name matches any of these globs.
	Exclude connectors.Globs `koanf:"exclude"`
	// AcknowledgeAbuse downloads files Google flagged as abusive (acknowledgeAbuse=true).
	AcknowledgeAbuse bool `koanf:"acknowledge_abuse"`
	// FullEvery is how often a full listing runs beside the changes feed, as a backstop for
	// files the feed misses (at least 1m).
	FullEvery time.Duration `koanf:"full_every"`
	// Endpoint is the Drive API base URL (default https://www.googleapis.com/drive/v3/).
	Endpoint string `koanf:"endpoint"`
	// CredentialsFile is a service-account key (JSON) or an OAuth "authorized_user" file with a
	// refresh token; empty uses Application Default Credentials.
	CredentialsFile string `koanf:"credentials_file"`
	// Credentials is the content of such a file; when nil, New reads it from CredentialsFile
	// (none: Application Default Credentials).
	Credentials []byte
	// Subject is a user the service account impersonates (domain-wide delegation), synced
	// before those of subjects.
	Subject string `koanf:"subject"`
	// Subjects are the users a service account impersonates (domain-wide delegation); each is
	// synced on its own. Empty, with no subject: the credentials' own identity.
	Subjects []string `koanf:"subjects"`
	// MaxAttempts bounds tries of a throttled call (default 8).
	MaxAttempts int
	// MinBackoff is the first wait of a throttled call (default 1 s), doubled up to 32 s, with
	// full jitter.
	MinBackoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SetDefaults fills in the defaults of unset fields.
func (c *Config) SetDefaults() {
	if c.FullEvery == 0 {
		c.FullEvery = time.Hour
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
	switch {
	case c.FolderID == "" && c.SharedDriveID == "" && !c.MeetRecordings:
		return &connectors.OptionError{Key: "folder_id", Err: errors.New("one of folder_id, shared_drive_id or meet_recordings is required")}
	case c.MeetRecordings && (c.FolderID != "" || c.SharedDriveID != ""):
		return &connectors.OptionError{Key: "meet_recordings", Err: errors.New("cannot be combined with folder_id or shared_drive_id")}
	case c.FullEvery != 0 && c.FullEvery < time.Minute:
		return &connectors.OptionError{Key: "full_every", Err: fmt.Errorf("%v is below 1m", c.FullEvery)}
	case c.MaxAttempts < 0:
		return fmt.Errorf("max attempts %d is negative", c.MaxAttempts)
	}
	if err := c.Include.CheckOption("include"); err != nil {
		return err
	}
	return c.Exclude.CheckOption("exclude")
}

// subjects lists who is synced: subject, then subjects; "" (the credentials' own identity)
// when neither is set.
func (c *Config) subjects() []string {
	var out []string
	if c.Subject != "" {
		out = append(out, c.Subject)
	}
	out = append(out, c.Subjects...)
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// readCredentials reads credentials_file into Credentials; the error is an
// *connectors.OptionError naming it.
func (c *Config) readCredentials() error {
	if c.CredentialsFile == "" || c.Credentials != nil {
		return nil
	}
	b, err := os.ReadFile(c.CredentialsFile)
	if err != nil {
		return &connectors.OptionError{Key: "credentials_file", Err: err}
	}
	c.Credentials = b
	return nil
}
