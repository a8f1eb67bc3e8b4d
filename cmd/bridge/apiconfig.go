package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// APIConfig is the api section: the transcription service the bridge uploads to and polls.
//
// It is the bridge's own section, not api.Config loaded directly: of its keys only base_url, key
// and requests_per_minute (DataPerMinute) are the client's, and even these differ. An empty
// base_url starts the in-process sandbox (api.Config requires a URL); the key may instead be in
// key_file, read when the client is made (api.Config holds the key itself); requests_per_minute
// must be at least 1 (api.Config takes a negative limit as none). poll_interval is the tracker's
// (bridge.RunOptions; api.Config's PollMin and PollMax pace Wait) and upload_concurrency the
// pipeline's (bridge.Pipeline; api.Config's MaxConcurrentUploads is the per-key cap). The rest
// of api.Config (its HTTP client, retries, backoff, user agent) is not configured. clientConfig
// makes the api.Config.
type APIConfig struct {
	// BaseURL of the transcription API; empty starts the sandbox in-process.
	BaseURL string `koanf:"base_url"`
	// Key is the API key; prefer key_file or the BRIDGE_API_KEY variable.
	Key string `koanf:"key"`
	// KeyFile holds the API key.
	KeyFile string `koanf:"key_file"`
	// PollInterval is how often the tracker lists transcriptions (default 5s). While uploads
	// wait for the key's 500 requests a minute (a backfill), it polls once a minute instead,
	// spending at most 10 of them, and catches up once the budget is free.
	PollInterval time.Duration `koanf:"poll_interval"`
	// UploadConcurrency bounds simultaneous uploads (default 4, at most 10).
	UploadConcurrency int `koanf:"upload_concurrency"`
	// RequestsPerMinute is the client-side limit on data requests per minute (default 500,
	// the documented limit; raise it only for a workspace granted more).
	RequestsPerMinute int `koanf:"requests_per_minute"`
}

// setDefaults fills in the poll interval (5s), the upload concurrency (4) and the request
// limit (500 a minute).
func (c *APIConfig) setDefaults() {
	if c.PollInterval == 0 {
		c.PollInterval = 5 * time.Second
	}
	if c.UploadConcurrency == 0 {
		c.UploadConcurrency = 4
	}
	if c.RequestsPerMinute == 0 {
		c.RequestsPerMinute = 500
	}
}

// Validate returns the first setting at fault, its error starting with the key
// ("api.poll_interval: ..."), or nil. It reads no key file.
func (c *APIConfig) Validate() error {
	switch {
	case c.BaseURL != "" && c.Key == "" && c.KeyFile == "":
		return errors.New("api.key_file: required with api.base_url (or set BRIDGE_API_KEY)")
	case c.PollInterval < time.Second:
		return fmt.Errorf("api.poll_interval: %v is below 1s", c.PollInterval)
	case c.UploadConcurrency < 1 || c.UploadConcurrency > 10:
		return fmt.Errorf("api.upload_concurrency: %d is not 1 to 10", c.UploadConcurrency)
	case c.RequestsPerMinute < 1:
		return fmt.Errorf("api.requests_per_minute: %d is below 1", c.RequestsPerMinute)
	}
	return nil
}

// clientConfig is the configuration of a client of the service at base with key (base_url
// and the key read from key, key_file or BRIDGE_API_KEY, or the sandbox's), limited to
// requests_per_minute; api.New checks it.
func (c *APIConfig) clientConfig(base, key string) api.Config {
	return api.Config{BaseURL: base, Key: key, DataPerMinute: c.RequestsPerMinute}
}
