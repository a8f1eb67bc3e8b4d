// Package export writes scheduled archives of completed transcripts: each run lists what was
// created since the export's checkpoint, downloads it (bulk ZIPs of at most 100, or one file
// each), streams it to a folder or an S3 prefix with a checksummed manifest, and only then
// moves the checkpoint. One run of an export at a time across replicas, one runner per
// (export, tick).
package export

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/transcript-bridge/bridge/bridge/redact"
)

// Formats and layouts.
const (
	LayoutZip   = "zip"
	LayoutFiles = "files"
)

// Filter narrows what an export takes; zero fields match everything.
type Filter struct {
	// ProjectID keeps transcriptions filed under this project (a UUID).
	ProjectID string `koanf:"project_id"`
	// Language keeps transcriptions in this language (a code).
	Language string `koanf:"language"`
	// Metadata keeps transcriptions whose metadata has every one of these keys and values.
	Metadata map[string]string `koanf:"metadata"`
	// Source keeps transcriptions the bridge uploaded from this source.
	Source string `koanf:"source"`
}

// Config is one export.
type Config struct {
	// Name identifies the export (runs and checkpoint are kept under it).
	Name string `koanf:"name"`
	// Schedule is a cron spec, optionally with CRON_TZ= ("CRON_TZ=Europe/Berlin 0 2 * * *").
	Schedule string `koanf:"schedule"`
	// Format is md, txt or json.
	Format string `koanf:"format"`
	// Layout is zip (bulk archives of at most 100) or files (one file each).
	Layout string `koanf:"layout"`
	// Destination is a folder or s3://bucket/prefix, a template over .Date (the tick's day,
	// 2006-01-02), .Time (150405) and .Name.
	Destination string `koanf:"destination"`
	// Filter narrows the transcriptions.
	Filter Filter `koanf:"filter"`
	// Since is where the first run starts (2006-01-02 or RFC 3339; default: 24 hours before the
	// first tick).
	Since string `koanf:"since"`
	// Keep is how many runs a folder destination keeps (0: all).
	Keep int `koanf:"keep"`
	// S3 configures an s3:// destination (region, endpoint, path_style, credentials).
	S3 S3Config `koanf:"s3"`
	// Redact lists what is removed from every exported file (and the manifest's titles): email,
	// phone, card, iban, ip; each match becomes [email], [phone], ...; the manifest counts them
	// per transcript.
	Redact []string `koanf:"redact"`
	// RedactPatterns are named regular expressions (RE2) also removed; each match becomes
	// [name]. A pattern that does not compile refuses to start, naming its key.
	RedactPatterns map[string]string `koanf:"redact_patterns"`
	// DefaultRegion is the region (ISO 3166 code, as US or GB) of phone numbers written
	// without a country code; without one only numbers starting with + are redacted.
	DefaultRegion string `koanf:"default_region"`

	redactor *redact.Set // nil: nothing to redact
	since    time.Time
	dest     *template.Template
	sched    cron.Schedule
}

// S3Config reaches an S3 or S3-compatible destination.
type S3Config struct {
	// Region is the bucket's region (default: the AWS chain's, else us-east-1).
	Region string `koanf:"region"`
	// Endpoint is the API base URL of an S3-compatible server (MinIO, R2); empty is AWS.
	Endpoint string `koanf:"endpoint"`
	// PathStyle addresses buckets as endpoint/bucket/key (most S3-compatible servers need it).
	PathStyle bool `koanf:"path_style"`
	// AccessKeyID is a static access key, with secret_access_key_file; empty uses the standard
	// AWS chain (environment, shared files, SSO, instance roles).
	AccessKeyID string `koanf:"access_key_id"`
	// SecretAccessKeyFile holds the secret of access_key_id.
	SecretAccessKeyFile string `koanf:"secret_access_key_file"`
}

// setDefaults fills in the defaults of unset fields: format md, layout zip.
func (c *Config) setDefaults() {
	if c.Format == "" {
		c.Format = "md"
	}
	if c.Layout == "" {
		c.Layout = LayoutZip
	}
}

// Validate fills in the defaults of unset fields (the bridge's configuration calls only
// Validate), checks the export and compiles its schedule, destination and since. It returns
// the first setting at fault, the error starting with its key ("keep: -1 is negative"), or
// nil.
func (c *Config) Validate() error {
	c.setDefaults()
	switch {
	case c.Name == "" || strings.ContainsAny(c.Name, "/\\ "):
		return fmt.Errorf("name: %q must be set and hold no slash or space", c.Name)
	case c.Format != "md" && c.Format != "txt" && c.Format != "json":
		return fmt.Errorf("format: %q is not md, txt or json", c.Format)
	case c.Layout != LayoutZip && c.Layout != LayoutFiles:
		return fmt.Errorf("layout: %q is not zip or files", c.Layout)
	case c.Destination == "":
		return errors.New("destination: required (a folder or s3://bucket/prefix)")
	case c.Keep < 0:
		return fmt.Errorf("keep: %d is negative", c.Keep)
	}
	if rc := c.redaction(); !rc.Empty() {
		s, err := redact.New(rc)
		if err != nil {
			return err
		}
		c.redactor = s
	} else if err := rc.Validate(); err != nil { // a default_region alone
		return err
	}
	sched, err := cron.ParseStandard(c.Schedule)
	if err != nil {
		return fmt.Errorf("schedule: %q: %w", c.Schedule, err)
	}
	c.sched = sched
	if c.dest, err = template.New("destination").Option("missingkey=error").Parse(c.Destination); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if _, err := c.where(time.Now()); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if c.Since != "" {
		if c.since, err = time.Parse("2006-01-02", c.Since); err != nil {
			if c.since, err = time.Parse(time.RFC3339, c.Since); err != nil {
				return fmt.Errorf("since: %q is not 2006-01-02 or RFC 3339", c.Since)
			}
		}
	}
	return nil
}

// where renders the destination for a run at tick.
func (c *Config) where(tick time.Time) (string, error) {
	var b strings.Builder
	err := c.dest.Execute(&b, map[string]string{"Date": tick.Format("2006-01-02"), "Time": tick.Format("150405"), "Name": c.Name})
	return b.String(), err
}

// Next is the export's first tick after t.
func (c *Config) Next(t time.Time) time.Time { return c.sched.Next(t) }
