// Package status is the bridge's status page: server-rendered HTML (html/template, embedded
// templates and CSS, no build step, no external assets; it works without JavaScript, and a
// little script only refreshes the view in place) on the bridge's own HTTP server, from which
// an admin sees what the bridge is doing and fixes what is stuck: held jobs released or
// reassigned to a member, dead letters replayed, endpoints paused and resumed, a job forgotten
// (after a confirmation that lists what it would do).
//
// Every action goes through the same domain functions as the command line (bridge.Release,
// relay.Replay, the store's DisableEndpoint and EnableEndpoint) and is written to the store's
// audit log (bridge.AuditStore).
//
// Access: with an admin token, a sign-in form compares the token in constant time and starts a
// session (a random id kept server-side with an expiry, in an HttpOnly, SameSite=Strict cookie,
// Secure over TLS); without one, the page may only be mounted on a loopback address (Loopback)
// and says so in a banner, and requests must name a loopback host (no DNS rebinding). Every
// state-changing form carries the session's CSRF token, checked in constant time, and
// cross-origin POSTs are refused (http.CrossOriginProtection).
//
// The upstream API is asked at most once per CacheFor (30 s) for the workspace (balance,
// limits) and for its members (the reassign picker), however often the page is loaded.
package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// API is what the page needs of the transcription API; *api.Client implements it.
type API interface {
	Workspace(ctx context.Context) (*api.Workspace, error)
	Members(ctx context.Context) ([]api.Member, error)
}

var _ API = (*api.Client)(nil)

// Endpoint is a configured webhook endpoint as the page shows it.
type Endpoint struct {
	// Name is the endpoint's name (webhooks[].name).
	Name string
	// URL is where it delivers, with any secret in it redacted (relay.RedactURL).
	URL string
}

// Options configure the page.
type Options struct {
	// Store is the bridge's store: what the page reads and acts on, and the audit log.
	Store bridge.Store
	// API is the transcription API (balance, limits, members); nil shows neither.
	API API
	// Deleter deletes transcriptions upstream for a job's forget action; nil: the page offers
	// the command instead.
	Deleter bridge.Deleter
	// Token is the admin token; empty only when Loopback is true.
	Token string
	// Loopback says the server listens on a loopback address only (see Loopback).
	Loopback bool
	// Sources are the configured sources' names.
	Sources []string
	// SourceHealth reports what the scans of this process say of each source
	// (bridge.Pipeline.SourceHealth): one that cannot be read is shown in red on the overview,
	// with its error and since when. Nil shows none.
	SourceHealth func() []bridge.SourceHealth
	// Endpoints are the configured webhook endpoints.
	Endpoints []Endpoint
	// Exports are the configured exports, to read the manifests of their runs.
	Exports []*export.Config
	// RateLimit describes the client-side rate limit of the API ("500 requests/min").
	RateLimit string
	// Log receives refused sign-ins and failed actions (default: discarded).
	Log *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// CacheFor is how long an answer of the API is reused (default 30 s, and never less).
	CacheFor time.Duration
	// SessionTTL is how long a session lasts after sign-in (default 12 h).
	SessionTTL time.Duration
	// Refresh is how often the page's script reloads the view in place (default 10 s).
	Refresh time.Duration
	// TrustedProxies are the addresses of the reverse proxies in front (server.trusted_proxies):
	// from them, and only from them, X-Forwarded-For names the client (sign-in limits, the audit
	// log) and X-Forwarded-Proto: https makes the session cookie Secure.
	TrustedProxies []netip.Prefix
	// SecureCookies marks the session cookie Secure whatever the request came over
	// (server.secure_cookies: the browser reaches the page over https through a proxy).
	SecureCookies bool
}

// ErrNoToken refuses a page without an admin token on an address that is not loopback.
var ErrNoToken = errors.New("server.admin_token_file is not set and the server does not listen on loopback only")

// Page is the status page: mount it on a server with Mount.
type Page struct {
	o         Options
	sessions  *sessions
	views     *views
	workspace *cached[*api.Workspace]
	members   *cached[[]api.Member]
	sources   *cached[[]sourceView]
	signins   *signins // refused sign-ins, by client address
	// refusalsAudited bounds the refused sign-ins the audit log keeps (auditRefusal).
	refusalsAudited *rate.Limiter
	// untrustedProxy warns once of a proxy not in TrustedProxies.
	untrustedProxy sync.Once
}

// New returns the page for o. It fails with ErrNoToken when o has no token and is not on
// loopback, and when the embedded templates do not parse (a build defect).
func New(o Options) (*Page, error) {
	if o.Token == "" && !o.Loopback {
		return nil, ErrNoToken
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.CacheFor = max(o.CacheFor, 30*time.Second)
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Second
	}
	v, err := parseViews()
	if err != nil {
		return nil, fmt.Errorf("status page: %w", err)
	}
	p := &Page{o: o, sessions: newSessions(o.SessionTTL), views: v, signins: newSignins(o.Now),
		refusalsAudited: rate.NewLimiter(rate.Every(time.Minute/auditedRefusals), auditedRefusals)}
	p.workspace = newCached(o.CacheFor, func(ctx context.Context) (*api.Workspace, error) {
		if o.API == nil {
			return nil, errors.New("no API configured")
		}
		return o.API.Workspace(ctx)
	})
	p.members = newCached(o.CacheFor, func(ctx context.Context) ([]api.Member, error) {
		if o.API == nil {
			return nil, errors.New("no API configured")
		}
		return o.API.Members(ctx)
	})
	p.sources = newCached(o.CacheFor, p.lastDiscoveries)
	return p, nil
}

// Mux is where the page's routes go; *server.Server and *http.ServeMux implement it.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Mount routes the page's paths on m: / (the overview), /login, /logout, /jobs, /held,
// /deliveries, /endpoints, /exports, /audit and /static/.
func (p *Page) Mount(m Mux) {
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, *session) error) {
		m.Handle(pattern, p.guard(p.authed(h)))
	}
	page("GET /{$}", p.overview)
	page("GET /jobs", p.jobs)
	page("GET /jobs/{id}", p.job)
	page("GET /jobs/{id}/forget", p.forgetConfirm)
	page("POST /jobs/{id}/forget", p.forget)
	page("GET /held", p.held)
	page("POST /held/{id}/release", p.release)
	page("POST /held/{id}/reassign", p.reassign)
	page("GET /deliveries", p.deliveries)
	page("GET /deliveries/{id}", p.delivery)
	page("POST /deliveries/{id}/replay", p.replayOne)
	page("POST /deliveries/replay", p.replayMany)
	page("GET /endpoints", p.endpoints)
	page("POST /endpoints/{name}/pause", p.pause)
	page("POST /endpoints/{name}/resume", p.resume)
	page("GET /exports", p.exports)
	page("GET /exports/manifest", p.manifest)
	page("GET /audit", p.auditLog)
	page("POST /logout", p.logout)
	m.Handle("GET /login", p.guard(http.HandlerFunc(p.loginForm)))
	m.Handle("POST /login", p.guard(http.HandlerFunc(p.login)))
	m.Handle("GET /static/{file}", p.guard(http.HandlerFunc(serveStatic)))
}

// Loopback reports whether addr (host:port, as server.addr takes it) listens on loopback only:
// localhost or a loopback IP. An empty host (":8080") listens everywhere: false.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return loopbackHost(host)
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (p *Page) now() time.Time { return p.o.Now().UTC() }
