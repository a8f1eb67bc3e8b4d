package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/transcript-bridge/bridge/bridge/natsbus"
)

// BusConfig is the bus section: how events travel from the store's outbox to the relay.
type BusConfig struct {
	// Driver is sql (default: the store's own database, SQLite or PostgreSQL) or nats (NATS
	// JetStream at bus.url; the store's outbox is forwarded to it).
	Driver string `koanf:"driver"`
	// URLFile holds bus.url instead (a secret: a nats:// URL may carry a user and password or a
	// token).
	URLFile string `koanf:"url_file"`
	// Config is the NATS bus's own settings (bus.url, bus.subject_prefix, …), used with
	// bus.driver nats.
	natsbus.Config `koanf:",squash"`
}

// setDefaults sets the driver; the NATS settings take theirs in Validate.
func (b *BusConfig) setDefaults() {
	if b.Driver == "" {
		b.Driver = "sql"
	}
}

// Validate checks the section; its errors start with the key at fault.
func (b *BusConfig) Validate() error {
	switch b.Driver {
	case "sql":
		if b.URL != "" || b.URLFile != "" {
			return fmt.Errorf("bus.url: set with bus.driver %s; it is for bus.driver nats", b.Driver)
		}
		return nil
	case "nats":
	default:
		return fmt.Errorf("bus.driver: %q is not sql or nats", b.Driver)
	}
	if b.URL != "" && b.URLFile != "" {
		return fmt.Errorf("bus.url_file: set bus.url or bus.url_file, not both")
	}
	c := b.Config
	if b.URLFile != "" {
		c.URL = "nats://file.invalid:4222" // checked when read
	}
	return c.Validate()
}

// nats returns the NATS bus's settings, with the URL read from bus.url_file when set.
func (b *BusConfig) nats() (natsbus.Config, error) {
	c := b.Config
	if b.URLFile != "" {
		raw, err := os.ReadFile(b.URLFile)
		if err != nil {
			return c, fmt.Errorf("bus.url_file: %w", err)
		}
		c.URL = strings.TrimSpace(string(raw))
	}
	if err := c.Validate(); err != nil && b.URLFile != "" {
		return c, fmt.Errorf("%w (read from bus.url_file %s)", err, b.URLFile)
	} else if err != nil {
		return c, err
	}
	return c, nil
}
