package zoom

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("zoom", func(_ string, cfg Config) (connectors.Source, error) {
		return New(cfg)
	})
}

// Config configures a Zoom source (Server-to-Server OAuth app). Its fields tagged koanf are
// the options of a source with type: zoom.
type Config struct {
	// AccountID is the app's account ID.
	AccountID string `koanf:"account_id"`
	// ClientID is the app's client ID.
	ClientID string `koanf:"client_id"`
	// ClientSecretFile holds the app's client secret.
	ClientSecretFile string `koanf:"client_secret_file"`
	// WebhookSecretFile holds the app's secret token, for x-zm-signature; empty disables the
	// webhook.
	WebhookSecretFile string `koanf:"webhook_secret_file"`
	// Users is "all" (every user, inactive ones included; swept with one account-wide listing
	// a window) or a list of e-mails or user ids: only their recordings are swept, and the
	// webhook ignores the recordings of other hosts.
	Users []string `koanf:"users"`
	// FileTypes is the order of preference among a meeting's files (M4A, MP4): the first type
	// present and completed is uploaded.
	FileTypes []string `koanf:"file_types"`
	// AfterUpload is keep, trash or delete, applied once the transcript is done.
	AfterUpload string `koanf:"after_upload"`
	// SweepDays is how far back each sweep looks, in days (webhooks are the fast path); Zoom
	// lists recordings of about the last six months.
	SweepDays int `koanf:"sweep_days"`
	// RatePlan is the account's plan for Zoom's per-category rate limits: pro (Light 30/s,
	// Medium 20/s, Heavy 10/s) or business (80, 60, 40).
	RatePlan string `koanf:"rate_plan"`
	// APIURL is the base URL of Zoom's API.
	APIURL string `koanf:"api_url"`
	// OAuthURL is Zoom's token endpoint.
	OAuthURL string `koanf:"oauth_url"`
	// ClientSecret is the app's client secret; when empty, New reads it from ClientSecretFile.
	ClientSecret string
	// WebhookSecret is the app's secret token; when empty, New reads it from
	// WebhookSecretFile.
	WebhookSecret string
	// RateShare is the part of the plan's limits this bridge may use (default 0.5: every app
	// of the account shares them).
	RateShare float64
	// RequestsPerSecond, when set, is every category's limit instead (an account with
	// negotiated limits, or a local test server).
	RequestsPerSecond float64
	// MinBackoff is the first wait after a 429 without Retry-After or a 5xx (default 1 s).
	MinBackoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SetDefaults fills in the defaults of unset fields.
func (c *Config) SetDefaults() {
	if len(c.Users) == 0 {
		c.Users = []string{"all"}
	}
	if len(c.FileTypes) == 0 {
		c.FileTypes = []string{"M4A", "MP4"}
	}
	set(&c.AfterUpload, "keep")
	set(&c.RatePlan, "pro")
	set(&c.APIURL, "https://api.zoom.us/v2")
	set(&c.OAuthURL, "https://zoom.us/oauth/token")
	if c.SweepDays == 0 {
		c.SweepDays = 3
	}
	if c.RateShare == 0 {
		c.RateShare = 0.5
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

func set(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

var knownTypes = map[string]bool{"M4A": true, "MP4": true}

// Validate returns an *connectors.OptionError naming the first option at fault, or nil.
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &connectors.OptionError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	if err := connectors.Required("account_id", c.AccountID); err != nil {
		return err
	}
	if err := connectors.Required("client_id", c.ClientID); err != nil {
		return err
	}
	if err := connectors.Required("client_secret_file", c.ClientSecret+c.ClientSecretFile); err != nil {
		return err
	}
	switch {
	case c.AfterUpload != "" && c.AfterUpload != "keep" && c.AfterUpload != "trash" && c.AfterUpload != "delete":
		return bad("after_upload", "%q is not keep, trash or delete", c.AfterUpload)
	case c.SweepDays < 0:
		return bad("sweep_days", "%d is below 1", c.SweepDays)
	case c.RateShare < 0 || c.RateShare > 1:
		return bad("rate_share", "%v is not between 0 and 1", c.RateShare)
	}
	if _, ok := perSecond[c.RatePlan]; !ok && c.RatePlan != "" {
		return bad("rate_plan", "%q is not pro or business", c.RatePlan)
	}
	for _, t := range c.FileTypes {
		if !knownTypes[strings.ToUpper(t)] {
			return bad("file_types", "%q is not M4A or MP4 (transcripts and chats are never uploaded)", t)
		}
	}
	return nil
}

// normalize writes file types in capitals and the API URL without a trailing slash.
func (c *Config) normalize() {
	types := make([]string, len(c.FileTypes))
	for i, t := range c.FileTypes {
		types[i] = strings.ToUpper(t)
	}
	c.FileTypes = types
	c.APIURL = strings.TrimSuffix(c.APIURL, "/")
}

// readSecrets reads client_secret_file and webhook_secret_file into ClientSecret and
// WebhookSecret, unless those are set; the error is an *connectors.OptionError naming the
// option.
func (c *Config) readSecrets() error {
	var err error
	if c.ClientSecret == "" && c.ClientSecretFile != "" {
		if c.ClientSecret, err = readSecret("client_secret_file", c.ClientSecretFile); err != nil {
			return err
		}
	}
	if c.WebhookSecret == "" && c.WebhookSecretFile != "" {
		c.WebhookSecret, err = readSecret("webhook_secret_file", c.WebhookSecretFile)
	}
	return err
}

func readSecret(option, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &connectors.OptionError{Key: option, Err: err}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", &connectors.OptionError{Key: option, Err: fmt.Errorf("%s is empty", path)}
	}
	return s, nil
}
