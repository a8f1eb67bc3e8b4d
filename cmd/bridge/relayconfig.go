package main

import (
	"fmt"
	"time"
)

// RelayConfig is the relay section: how the relay sends the events to the webhooks.
//
// It is the bridge's own section, not a relay type loaded directly: relay.Relay is the running
// relay (its store, bus, endpoints and HTTP clients), not settings, and of these two keys only
// lease is one of its fields (Lease); interval is the argument of Relay.Run. The endpoints
// themselves are the webhooks section, loaded into relay.EndpointConfig.
type RelayConfig struct {
	// Lease is how long a delivery being sent is reserved (default 2m); after a crash it is
	// sent again once the lease has run out.
	Lease time.Duration `koanf:"lease"`
	// Interval is how often due deliveries are looked for (default 500ms).
	Interval time.Duration `koanf:"interval"`
}

// setDefaults fills in the lease (2m) and the interval (500ms).
func (c *RelayConfig) setDefaults() {
	if c.Lease == 0 {
		c.Lease = 2 * time.Minute
	}
	if c.Interval == 0 {
		c.Interval = 500 * time.Millisecond
	}
}

// Validate returns the first setting at fault, its error starting with the key
// ("relay.interval: ..."), or nil.
func (c *RelayConfig) Validate() error {
	switch {
	case c.Lease < 0:
		return fmt.Errorf("relay.lease: %v is not positive", c.Lease)
	case c.Interval < 0:
		return fmt.Errorf("relay.interval: %v is not positive", c.Interval)
	}
	return nil
}
