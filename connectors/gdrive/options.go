package gdrive

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// Config configures a Google Drive source.
type Config struct {
	// Credentials is a service-account key (JSON) or an OAuth "authorized_user" file with a
	// refresh token; nil uses Application Default Credentials.
	Credentials []byte
	// Subjects are the users a service account impersonates (domain-wide delegation); each is
	// synced on its own. Empty: the credentials' own identity.
	Subjects []string
	// FolderID is a folder synced recursively.
	FolderID string
	// SharedDriveID is a shared drive: all of it, or only FolderID within it.
	SharedDriveID string
	// MeetRecordings syncs each subject's "Meet Recordings" folder (where Google Meet saves).
	MeetRecordings bool
	// Include and Exclude are globs on the file name.
	Include, Exclude connectors.Globs
	// AcknowledgeAbuse downloads files Google flagged as abusive (acknowledgeAbuse=true).
	AcknowledgeAbuse bool
	// FullEvery is how often a full listing runs beside the changes feed, as a backstop for
	// files the feed misses (default 1h).
	FullEvery time.Duration
	// Endpoint is the Drive API base URL (default https://www.googleapis.com/drive/v3/).
	Endpoint string
	// MaxAttempts bounds tries of a throttled call (default 8); MinBackoff is the first wait
	// (default 1 s), doubled up to 32 s, with full jitter.
	MaxAttempts int
	MinBackoff  time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func parseOptions(opts map[string]any) (Config, error) {
	o := connectors.NewOptions(opts)
	c := Config{
		FolderID:         o.String("folder_id", ""),
		SharedDriveID:    o.String("shared_drive_id", ""),
		MeetRecordings:   o.Bool("meet_recordings", false),
		Include:          o.Globs("include"),
		Exclude:          o.Globs("exclude"),
		AcknowledgeAbuse: o.Bool("acknowledge_abuse", false),
		FullEvery:        o.Duration("full_every", time.Hour),
		Endpoint:         o.String("endpoint", ""),
	}
	credFile := o.String("credentials_file", "")
	if s := o.String("subject", ""); s != "" {
		c.Subjects = []string{s}
	}
	c.Subjects = append(c.Subjects, o.Strings("subjects")...)
	if err := o.Err("gdrive"); err != nil {
		return c, err
	}
	if credFile != "" {
		b, err := os.ReadFile(credFile)
		if err != nil {
			return c, fmt.Errorf("option credentials_file: %w", err)
		}
		c.Credentials = b
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	switch {
	case c.FolderID == "" && c.SharedDriveID == "" && !c.MeetRecordings:
		return errors.New("option folder_id: one of folder_id, shared_drive_id or meet_recordings is required")
	case c.MeetRecordings && (c.FolderID != "" || c.SharedDriveID != ""):
		return errors.New("option meet_recordings: cannot be combined with folder_id or shared_drive_id")
	case c.FullEvery != 0 && c.FullEvery < time.Minute:
		return fmt.Errorf("option full_every: %v is below 1m", c.FullEvery)
	}
	if c.FullEvery == 0 {
		c.FullEvery = time.Hour
	}
	for _, g := range []connectors.Globs{c.Include, c.Exclude} {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("option include/exclude: %w", err)
		}
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
	if len(c.Subjects) == 0 {
		c.Subjects = []string{""}
	}
	return nil
}
