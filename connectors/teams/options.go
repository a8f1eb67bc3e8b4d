package teams

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("teams", func(name string, cfg Config) (connectors.Source, error) {
		cfg.Name = name
		s, err := New(cfg)
		if err != nil {
			return nil, err
		}
		if ps := s.Push(); ps != nil {
			return ps, nil // a Pusher only when notifications are set
		}
		return s, nil
	})
}

// Config configures a Microsoft Teams source (an Entra ID app registration with application
// permissions). Its fields tagged koanf are the options of a source with type: teams.
type Config struct {
	// TenantID is the Entra ID tenant (directory) id, or one of its verified domains.
	TenantID string `koanf:"tenant_id"`
	// ClientID is the app registration's application (client) id.
	ClientID string `koanf:"client_id"`
	// ClientSecretFile holds the app registration's client secret.
	ClientSecretFile string `koanf:"client_secret_file"`
	// Organizers is all (every user of the tenant, listed with GET /users: User.Read.All) or
	// a list of the users whose meetings' recordings are synced: e-mails (userPrincipalName or
	// mail) or object ids, and `group:<mail or object id>` for a group's members, nested
	// groups included (GroupMember.Read.All).
	Organizers []string `koanf:"organizers"`
	// StartDate is how far back the first sync looks, and a resync after an expired delta
	// token: a date (2026-01-01) or an RFC 3339 time; empty: 30 days before that sync.
	StartDate string `koanf:"start_date"`
	// AdHocCalls also syncs the recordings of the ad hoc calls each organizer starts (1:1 and
	// group calls, PSTN calls, Meet now: calls not scheduled as meetings, which
	// getAllRecordings of meetings does not list), found by the sweep with
	// adhocCall: getAllRecordings over the days since the last sweep (Graph has no delta or
	// change notification for them here). Needs the application permission
	// CallRecordings.Read.All and the organizers' application access policy.
	AdHocCalls bool `koanf:"ad_hoc_calls"`
	// Notifications enables Graph change notifications, beside the sweep: `public_url` is the
	// HTTPS address at which Graph reaches this bridge's server (notifications go to
	// `<public_url>/hooks/teams/<source name>`), `client_state_file` holds the clientState
	// secret (at most 128 characters) every notification must carry; empty: sweep only.
	Notifications map[string]string `koanf:"notifications"`
	// GraphURL is the base URL of Microsoft Graph, without the version.
	GraphURL string `koanf:"graph_url"`
	// LoginURL is the Microsoft identity platform; the token endpoint is
	// `<login_url>/<tenant_id>/oauth2/v2.0/token`.
	LoginURL string `koanf:"login_url"`
	// Name is the source's name, for the notification URL (set by the registry).
	Name string
	// ClientSecret is the client secret; when empty, New reads it from ClientSecretFile.
	ClientSecret string
	// ClientState is the notifications' clientState; when empty, New reads it from
	// notifications.client_state_file.
	ClientState string
	// MaxAttempts bounds the tries of one Graph call (default 6).
	MaxAttempts int
	// MinBackoff is the first wait after a 429 or 5xx without Retry-After (default 1 s).
	MinBackoff time.Duration
	// SubscriptionLifetime is the life asked for a change-notification subscription (default
	// 4230 minutes; when Graph refuses it, an hour is asked instead).
	SubscriptionLifetime time.Duration
	// SubscribeRetry is the first wait after a subscription could not be made or renewed
	// (default 30 s, doubled up to 15 minutes).
	SubscribeRetry time.Duration
	// NotifyQueue is how many notified recordings may wait to be read from Graph (default
	// 1000); past it a notification is answered 503 and Graph sends it again.
	NotifyQueue int
	// OrganizersRefresh is how often a source with notifications resolves its organizers
	// (the e-mails and groups of organizers) again, from the start of Subscribe (default an
	// hour), so that a notification is checked against them without calling Graph.
	OrganizersRefresh time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SetDefaults fills in the defaults of unset fields.
func (c *Config) SetDefaults() {
	if len(c.Organizers) == 0 {
		c.Organizers = []string{"all"}
	}
	set(&c.GraphURL, "https://graph.microsoft.com")
	set(&c.LoginURL, "https://login.microsoftonline.com")
	setDur(&c.MinBackoff, time.Second)
	setDur(&c.SubscriptionLifetime, 4230*time.Minute)
	setDur(&c.SubscribeRetry, 30*time.Second)
	setDur(&c.OrganizersRefresh, time.Hour)
	if c.NotifyQueue == 0 {
		c.NotifyQueue = 1000
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 6
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

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// notificationKeys are the keys notifications takes.
var notificationKeys = []string{"client_state_file", "public_url"}

// Validate returns an *connectors.OptionError naming the first option at fault, or nil.
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &connectors.OptionError{Key: key, Err: fmt.Errorf(format, args...)}
	}
	for _, kv := range [][2]string{{"tenant_id", c.TenantID}, {"client_id", c.ClientID}, {"client_secret_file", c.ClientSecret + c.ClientSecretFile}} {
		if err := connectors.Required(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if slices.Contains(c.Organizers, "all") && len(c.Organizers) > 1 {
		return bad("organizers", "all cannot be combined with e-mails")
	}
	for _, o := range c.Organizers {
		if key := strings.TrimPrefix(o, "group:"); o != "all" && !strings.Contains(key, "@") && !objectID(key) {
			return bad("organizers", "%q is neither all, an e-mail, an object id nor group:<mail or object id>", o)
		}
	}
	if _, err := c.start(time.Time{}); err != nil {
		return bad("start_date", "%v", err)
	}
	for _, k := range []struct{ key, url string }{{"graph_url", c.GraphURL}, {"login_url", c.LoginURL}} {
		if u, err := url.Parse(k.url); k.url != "" && (err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http")) {
			return bad(k.key, "%q is not an http(s) URL", k.url)
		}
	}
	if c.MaxAttempts < 0 {
		return errors.New("teams: max attempts is negative")
	}
	return c.validateNotifications()
}

// validateNotifications checks the notifications keys: only public_url and client_state_file,
// both or neither, and an https public_url (http only on loopback, for tests).
func (c *Config) validateNotifications() error {
	bad := func(format string, args ...any) error {
		return &connectors.OptionError{Key: "notifications", Err: fmt.Errorf(format, args...)}
	}
	for k := range c.Notifications {
		if !slices.Contains(notificationKeys, k) {
			return bad("unknown key %q (takes %s)", k, strings.Join(notificationKeys, ", "))
		}
	}
	pub, state := c.Notifications["public_url"], c.Notifications["client_state_file"]
	switch {
	case pub == "" && state == "" && c.ClientState == "":
		return nil
	case pub == "":
		return bad("public_url is required with client_state_file")
	case state == "" && c.ClientState == "":
		return bad("client_state_file is required with public_url (every notification must carry its secret)")
	case len(c.ClientState) > 128:
		return bad("the clientState is %d characters; Graph takes at most 128", len(c.ClientState))
	}
	u, err := url.Parse(pub)
	if err != nil || u.Host == "" || u.RawQuery != "" {
		return bad("public_url %q is not a URL without a query", pub)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())) {
		return bad("public_url %q: Graph posts to https URLs only", pub)
	}
	return nil
}

// objectID reports whether s looks like an Entra ID object id (a GUID).
func objectID(s string) bool {
	return len(s) == 36 && strings.Count(s, "-") == 4 && strings.Trim(s, "0123456789abcdefABCDEF-") == ""
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// start is the first sync's start: StartDate, else 30 days before now.
func (c *Config) start(now time.Time) (time.Time, error) {
	if c.StartDate == "" {
		return now.AddDate(0, 0, -30).UTC(), nil
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

// all reports whether every user of the tenant is an organizer.
func (c *Config) all() bool { return len(c.Organizers) == 1 && c.Organizers[0] == "all" }

// normalize writes the URLs without a trailing slash.
func (c *Config) normalize() {
	c.GraphURL = strings.TrimSuffix(c.GraphURL, "/")
	c.LoginURL = strings.TrimSuffix(c.LoginURL, "/")
}

// readSecrets reads client_secret_file and notifications.client_state_file into ClientSecret
// and ClientState, unless those are set; the error is an *connectors.OptionError naming the
// option.
func (c *Config) readSecrets() error {
	var err error
	if c.ClientSecret == "" {
		if c.ClientSecret, err = readSecret("client_secret_file", c.ClientSecretFile); err != nil {
			return err
		}
	}
	if f := c.Notifications["client_state_file"]; c.ClientState == "" && f != "" {
		if c.ClientState, err = readSecret("notifications", f); err != nil {
			return err
		}
		if len(c.ClientState) > 128 {
			return &connectors.OptionError{Key: "notifications", Err: fmt.Errorf("%s: %d characters; Graph takes a clientState of at most 128", f, len(c.ClientState))}
		}
	}
	return nil
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
