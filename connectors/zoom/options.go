package zoom

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// Config configures a Zoom source (Server-to-Server OAuth app).
type Config struct {
	// AccountID, ClientID and ClientSecret are the app's credentials.
	AccountID, ClientID, ClientSecret string
	// WebhookSecret is the app's secret token, for x-zm-signature; empty disables the webhook.
	WebhookSecret string
	// Users is "all" (every user, inactive ones included) or a list of e-mails or user ids.
	Users []string
	// FileTypes is the order of preference among a meeting's files: the first type present
	// and completed is uploaded (default M4A, then MP4).
	FileTypes []string
	// AfterUpload is keep (default), trash or delete, applied once the transcript is done.
	AfterUpload string
	// SweepDays is how far back each sweep looks (default 3: webhooks are the fast path).
	SweepDays int
	// APIURL and OAuthURL default to https://api.zoom.us/v2 and https://zoom.us/oauth/token.
	APIURL, OAuthURL string
	// RatePlan is the account's plan for Zoom's per-category rate limits: pro (Light 30/s,
	// Medium 20/s, Heavy 10/s; the default) or business (80, 60, 40).
	RatePlan string
	// RateShare is the part of those limits this bridge may use (default 0.5: every app of the
	// account shares them).
	RateShare float64
	// RequestsPerSecond, when set, is every category's limit instead (an account with
	// negotiated limits, or a local test server).
	RequestsPerSecond float64
	// MinBackoff is the first wait after a 429 without Retry-After or a 5xx (default 1 s).
	MinBackoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func parseOptions(opts map[string]any) (Config, error) {
	o := connectors.NewOptions(opts)
	for _, k := range []string{"account_id", "client_id", "client_secret_file"} {
		o.Required(k)
	}
	c := Config{
		AccountID:   o.String("account_id", ""),
		ClientID:    o.String("client_id", ""),
		Users:       o.Strings("users"),
		FileTypes:   o.Strings("file_types"),
		AfterUpload: o.String("after_upload", "keep"),
		SweepDays:   int(o.Int("sweep_days", 3)),
		RatePlan:    o.String("rate_plan", "pro"),
		APIURL:      o.String("api_url", ""),
		OAuthURL:    o.String("oauth_url", ""),
	}
	secretFile, hookFile := o.String("client_secret_file", ""), o.String("webhook_secret_file", "")
	if err := o.Err("zoom"); err != nil {
		return c, err
	}
	var err error
	if c.ClientSecret, err = readSecret("client_secret_file", secretFile); err != nil {
		return c, err
	}
	if hookFile != "" {
		if c.WebhookSecret, err = readSecret("webhook_secret_file", hookFile); err != nil {
			return c, err
		}
	}
	return c, c.validate()
}

func readSecret(option, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("option %s: %w", option, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("option %s: %s is empty", option, path)
	}
	return s, nil
}

var knownTypes = map[string]bool{"M4A": true, "MP4": true}

func (c *Config) validate() error {
	if c.AfterUpload == "" {
		c.AfterUpload = "keep"
	}
	if c.SweepDays == 0 {
		c.SweepDays = 3
	}
	switch {
	case c.AccountID == "" || c.ClientID == "" || c.ClientSecret == "":
		return errors.New("option account_id: account_id, client_id and client_secret_file are all required")
	case c.AfterUpload != "keep" && c.AfterUpload != "trash" && c.AfterUpload != "delete":
		return fmt.Errorf("option after_upload: %q is not keep, trash or delete", c.AfterUpload)
	case c.SweepDays < 1:
		return fmt.Errorf("option sweep_days: %d is below 1", c.SweepDays)
	}
	if len(c.Users) == 0 {
		c.Users = []string{"all"}
	}
	if len(c.FileTypes) == 0 {
		c.FileTypes = []string{"M4A", "MP4"}
	}
	for i, t := range c.FileTypes {
		c.FileTypes[i] = strings.ToUpper(t)
		if !knownTypes[c.FileTypes[i]] {
			return fmt.Errorf("option file_types: %q is not M4A or MP4 (transcripts and chats are never uploaded)", t)
		}
	}
	if c.APIURL == "" {
		c.APIURL = "https://api.zoom.us/v2"
	}
	c.APIURL = strings.TrimSuffix(c.APIURL, "/")
	if c.OAuthURL == "" {
		c.OAuthURL = "https://zoom.us/oauth/token"
	}
	if c.RatePlan == "" {
		c.RatePlan = "pro"
	}
	if _, ok := perSecond[c.RatePlan]; !ok {
		return fmt.Errorf("option rate_plan: %q is not pro or business", c.RatePlan)
	}
	if c.RateShare == 0 {
		c.RateShare = 0.5
	}
	if c.RateShare < 0 || c.RateShare > 1 {
		return fmt.Errorf("option rate_share: %v is not between 0 and 1", c.RateShare)
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}
