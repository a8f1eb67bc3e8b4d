// Package natsbus is the event bus on NATS JetStream (bus.driver: nats), through
// watermill-nats: a Watermill Publisher and Subscriber for replicas that share a NATS server
// instead of the store's database.
//
// Layout on the server: one stream (bus.stream, default the subject prefix in upper case) holds
// every topic, as the subject <bus.subject_prefix>.<topic>: "events" is bridge.events and
// "events.poison" is bridge.events.poison. Topics may contain dots; a stream or consumer name
// never does. Messages stay for bus.max_age whether read or not (limits retention), so a
// consumer group created later, or one that was down, still reads everything published since.
//
// Each consumer group has one durable pull consumer per topic, shared by all its subscribers
// (replicas): each message goes to one of them. A message is acknowledged to the server only
// after the handler acks it, and the server confirms that ack (double ack); a nacked message,
// or one whose handler does not answer within bus.ack_wait, or one left behind by a subscriber
// that stopped, is delivered again. bus.max_in_flight (default 100) is how many unacknowledged
// messages a group may hold, handed out side by side; with 1, the group reads in publish order
// even across failures and replicas, one message at a time. A publisher stamps every message with its topic and UUID as Nats-Msg-Id, so the
// server drops a copy republished to the same topic within its duplicate window (two minutes,
// or bus.max_age when shorter).
package natsbus

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config configures a Publisher and a Subscriber. Its keys are under bus: in the bridge's
// configuration, with bus.driver: nats.
type Config struct {
	// URL is the server: nats://host:port, or several separated by commas (a cluster); tls://
	// for TLS. Default nats://127.0.0.1:4222.
	URL string `koanf:"url"`
	// SubjectPrefix is put before every topic: <prefix>.<topic> (default "bridge"). Two
	// installations on one server need two prefixes.
	SubjectPrefix string `koanf:"subject_prefix"`
	// Stream names the JetStream stream holding <prefix>.> (default: the prefix in upper case,
	// dots as underscores). An existing stream is used as it is (replicas, limits), as long as
	// it holds those subjects.
	Stream string `koanf:"stream"`
	// ConsumerGroup names the subscribers' group (default "relay", as on the SQL bus).
	ConsumerGroup string `koanf:"consumer_group"`
	// AckWait is how long a handler may take before its message is delivered again (default
	// 30 s).
	AckWait time.Duration `koanf:"ack_wait"`
	// NakDelay is the wait before a nacked message is delivered again (default 1 s; the relay
	// has already retried it a few times in-process).
	NakDelay time.Duration `koanf:"nak_delay"`
	// MaxInFlight is how many delivered, unacknowledged messages a consumer group may hold at
	// once across its subscribers (default 100), handed out in no guaranteed order (the relay
	// keeps each job's events in order by itself): each subscription hands out up to this many
	// at once, which the relay's fan-out commits together, and a replica's crash
	// holds back only what it held (for bus.ack_wait). 1 is strict order: one message at a time
	// across the group, each event a commit of its own (about 800 deliveries/s, BENCHMARKS.md).
	MaxInFlight int `koanf:"max_in_flight"`
	// MaxAge is how long the stream keeps a message (default 7 days; applies when this
	// package creates the stream).
	MaxAge time.Duration `koanf:"max_age"`
	// Replicas is the stream's replica count in a JetStream cluster (default 1; applies when
	// this package creates the stream).
	Replicas int `koanf:"replicas"`
}

// Defaults.
const (
	DefaultURL           = "nats://127.0.0.1:4222"
	DefaultSubjectPrefix = "bridge"
	DefaultConsumerGroup = "relay"
	DefaultAckWait       = 30 * time.Second
	DefaultMaxInFlight   = 100
	DefaultNakDelay      = time.Second
	DefaultMaxAge        = 7 * 24 * time.Hour
)

func (c *Config) setDefaults() {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = DefaultSubjectPrefix
	}
	if c.Stream == "" {
		c.Stream = strings.ToUpper(strings.ReplaceAll(c.SubjectPrefix, ".", "_"))
	}
	if c.ConsumerGroup == "" {
		c.ConsumerGroup = DefaultConsumerGroup
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.NakDelay == 0 {
		c.NakDelay = DefaultNakDelay
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
}

// Validate reports the first setting that cannot work, naming its key. It applies the
// defaults to unset fields first.
func (c *Config) Validate() error {
	c.setDefaults()
	if err := validURLs(c.URL); err != nil {
		return fmt.Errorf("bus.url: %w", err)
	}
	if err := validSubject(c.SubjectPrefix); err != nil {
		return fmt.Errorf("bus.subject_prefix: %q: %w", c.SubjectPrefix, err)
	}
	if err := validName(c.Stream); err != nil {
		return fmt.Errorf("bus.stream: %q: %w", c.Stream, err)
	}
	switch {
	case strings.TrimSpace(c.ConsumerGroup) != c.ConsumerGroup:
		return fmt.Errorf("bus.consumer_group: %q has leading or trailing space", c.ConsumerGroup)
	case c.AckWait < 100*time.Millisecond:
		return fmt.Errorf("bus.ack_wait: %v is below 100ms", c.AckWait)
	case c.NakDelay < 0:
		return fmt.Errorf("bus.nak_delay: %v is negative", c.NakDelay)
	case c.MaxInFlight < 1:
		return fmt.Errorf("bus.max_in_flight: %d is below 1", c.MaxInFlight)
	case c.MaxAge < time.Minute:
		return fmt.Errorf("bus.max_age: %v is below 1m", c.MaxAge)
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf("bus.replicas: %d is not 1 to 5", c.Replicas)
	}
	return nil
}

// validURLs checks a comma-separated list of server URLs.
func validURLs(list string) error {
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("%q is not a URL", redact(s))
		}
		switch {
		case u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss":
			return fmt.Errorf("%q: scheme is not nats, tls, ws or wss", redact(s))
		case u.Hostname() == "":
			return fmt.Errorf("%q has no host", redact(s))
		}
	}
	return nil
}

// validSubject checks a subject of literal tokens (no wildcards).
func validSubject(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for _, tok := range strings.Split(s, ".") {
		switch {
		case tok == "":
			return errors.New("has an empty token (a leading, trailing or double dot)")
		case tok == "*" || tok == ">" || strings.ContainsAny(tok, "*>"):
			return errors.New("holds a wildcard (* or >)")
		case strings.ContainsAny(tok, " \t\r\n"):
			return errors.New("holds white space")
		}
	}
	return nil
}

// validName checks a stream name.
func validName(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case strings.ContainsAny(s, ".*> \t\r\n/\\"):
		return errors.New("holds a dot, wildcard, white space or slash")
	case len(s) > 255:
		return errors.New("is longer than 255 bytes")
	}
	return nil
}

// redact hides the user information (a user and password, or a token) of a server URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.LastIndex(s, "@"); i >= 0 {
			return "REDACTED" + s[i:]
		}
		return s
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	return u.String()
}

// redactList redacts every URL of a comma-separated list.
func redactList(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = redact(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}
