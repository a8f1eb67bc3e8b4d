package zoom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"
	"golang.org/x/time/rate"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/httpenv"
	"github.com/transcript-bridge/bridge/internal/retry"
)

// APIError is an answer Zoom refused, with its code and message kept verbatim.
type APIError struct {
	Status  int
	Code    int    `json:"code"`
	Message string `json:"message"`
	Op      string
}

// Error implements error: the operation, statuses and Zoom's message.
func (e *APIError) Error() string {
	return fmt.Sprintf("zoom %s: %d (code %d): %s", e.Op, e.Status, e.Code, e.Message)
}

// client calls the Zoom API: paced by one limiter per rate-limit category, 401 answered with a fresh token once, 429
// waiting Retry-After (seconds or a date, capped at 5 minutes), 5xx and network errors retried
// with backoff (internal/retry's policy).
type client struct {
	cfg    Config
	http   *resty.Client
	tokens *tokens
	limits map[category]*rate.Limiter
	// files downloads recordings: no overall timeout (a large file takes long), only a bound on
	// the wait for the answer's headers.
	files *http.Client
	// hosts are where Zoom's credentials may go (zoomHosts).
	hosts *connectors.HostRule
}

// category is Zoom's rate-limit class of an endpoint.
type category int

const (
	light category = iota
	medium
	heavy
)

// perSecond are Zoom's per-account limits by plan: Pro, and Business or higher.
var perSecond = map[string][3]float64{"pro": {30, 20, 10}, "business": {80, 60, 40}}

func newClient(c Config) *client {
	l := map[category]*rate.Limiter{}
	for cat, n := range perSecond[c.RatePlan] {
		n *= c.RateShare // every app of the account shares the limits
		if c.RequestsPerSecond > 0 {
			n = c.RequestsPerSecond
		}
		l[category(cat)] = rate.NewLimiter(rate.Limit(n), max(1, int(n)))
	}
	// Every call honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
	tr := httpenv.Transport()
	tr.ResponseHeaderTimeout = time.Minute
	zoom := zoomHosts(c)
	api := &http.Client{Transport: httpenv.Transport(), CheckRedirect: connectors.KeepCredentials(zoom)}
	return &client{cfg: c, http: resty.NewWithClient(api).SetTimeout(60 * time.Second),
		tokens: newTokens(c, &http.Client{Transport: httpenv.Transport(), Timeout: 60 * time.Second}), limits: l,
		files: &http.Client{Transport: tr, CheckRedirect: connectors.KeepCredentials(zoom)}, hosts: zoom}
}

// zoomHosts are the hosts Zoom's credentials (the OAuth token, a webhook's download token) may
// be sent to: Zoom's own domains (zoom.us, zoomgov.com for Zoom for Government, and their
// subdomains, where recordings are served), the host of the configured api_url, and, when that
// host is a name, the names under it.
func zoomHosts(c Config) *connectors.HostRule {
	r := &connectors.HostRule{Domains: []string{"zoom.us", "zoomgov.com"}}
	if u, err := url.Parse(c.APIURL); err == nil && u.Host != "" {
		r.Hosts = append(r.Hosts, u.Host)
		if _, err := netip.ParseAddr(u.Hostname()); err != nil {
			r.Domains = append(r.Domains, u.Hostname())
		}
	}
	return r
}

const maxAttempts = 6

// call sends method path?query, paced by cat's limiter, and decodes the JSON answer into out
// (when not nil). It runs under the module's retry policy (internal/retry), up to maxAttempts:
// 429 waits Retry-After (or backs off), 5xx and network errors back off exponentially from
// MinBackoff up to 30 s with full jitter; a 401 is sent again once with a fresh token.
func (c *client) call(ctx context.Context, cat category, op, method, path string, query url.Values, out any) error {
	p := retry.Policy{MaxAttempts: maxAttempts, MinBackoff: c.cfg.MinBackoff, MaxBackoff: 30 * time.Second}
	refreshed := false
	return p.Do(ctx, func() error {
		for {
			if err := c.limits[cat].Wait(ctx); err != nil {
				return retry.Permanent(err)
			}
			tok, err := c.tokens.get(ctx)
			if err != nil {
				return retry.Permanent(err)
			}
			resp, err := c.http.R().SetContext(ctx).SetHeader("Authorization", "Bearer "+tok).SetQueryParamsFromValues(query).
				Execute(method, c.cfg.APIURL+path)
			switch {
			case err != nil:
				if ctx.Err() != nil {
					return retry.Permanent(ctx.Err())
				}
				return fmt.Errorf("zoom %s: %w", op, err)
			case resp.StatusCode() == http.StatusUnauthorized && !refreshed:
				c.tokens.invalidate(tok)
				refreshed = true
				continue // sent again with a fresh token: not an attempt of its own
			}
			return answer(resp, op, out, c.cfg.Now())
		}
	})
}

// answer decodes a 2xx answer into out (when not nil), or classifies Zoom's refusal for the
// retry policy: a spent daily limit is final (a *dailyLimitError naming the reset: another
// attempt before it is futile), another 429 waits its Retry-After, 5xx backs off, other
// refusals are final.
func answer(resp *resty.Response, op string, out any, now time.Time) error {
	if resp.StatusCode() < 300 {
		if out == nil || len(resp.Body()) == 0 {
			return nil
		}
		if err := json.Unmarshal(resp.Body(), out); err != nil {
			return retry.Permanent(fmt.Errorf("zoom %s: decode: %w", op, err))
		}
		return nil
	}
	e := &APIError{Status: resp.StatusCode(), Op: op}
	json.Unmarshal(resp.Body(), e)
	switch {
	case e.Status == http.StatusTooManyRequests:
		if until, ok := dailyReset(resp.Header(), e.Message, now); ok {
			return retry.Permanent(&dailyLimitError{err: e, until: until})
		}
		return retry.After(e, retryAfter(resp.Header().Get("Retry-After"), now))
	case e.Status < 500:
		return retry.Permanent(e)
	}
	return e
}

// retryAfter reads Retry-After (seconds, an HTTP date or, as Zoom writes dates, RFC 3339)
// within Zoom's bounds: a past date is at once (1 ms), at most 5 minutes; 0 when absent or
// unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	t, ok := parseReset(v, now)
	if !ok {
		return 0
	}
	return min(max(t.Sub(now), time.Millisecond), 5*time.Minute)
}

// isStatus reports whether err is a Zoom refusal with this HTTP status.
func isStatus(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == status
}

// meetingPath encodes a meeting UUID for a path segment: twice when it starts with "/" or
// contains "//", as Zoom requires, else once.
func meetingPath(uuid string) string {
	if strings.HasPrefix(uuid, "/") || strings.Contains(uuid, "//") {
		return url.QueryEscape(url.QueryEscape(uuid))
	}
	return url.QueryEscape(uuid) // as encodeURIComponent: "+", "/" and "=" escaped
}
