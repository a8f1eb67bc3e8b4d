package zoom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"
	"golang.org/x/time/rate"

	"github.com/transcript-bridge/bridge/internal/httpenv"
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
// with backoff.
type client struct {
	cfg    Config
	http   *resty.Client
	tokens *tokens
	limits map[category]*rate.Limiter
	// files downloads recordings: no overall timeout (a large file takes long), only a bound on
	// the wait for the answer's headers.
	files *http.Client
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
	return &client{cfg: c, http: resty.NewWithClient(&http.Client{Transport: httpenv.Transport()}).SetTimeout(60 * time.Second),
		tokens: newTokens(c, &http.Client{Transport: httpenv.Transport(), Timeout: 60 * time.Second}), limits: l,
		files: &http.Client{Transport: tr}}
}

const maxAttempts = 6

// call sends method path?query, paced by cat's limiter, and decodes the JSON answer into out
// (when not nil).
func (c *client) call(ctx context.Context, cat category, op, method, path string, query url.Values, out any) error {
	refreshed := false
	for attempt := 1; ; attempt++ {
		if err := c.limits[cat].Wait(ctx); err != nil {
			return err
		}
		tok, err := c.tokens.get(ctx)
		if err != nil {
			return err
		}
		resp, err := c.http.R().SetContext(ctx).SetHeader("Authorization", "Bearer "+tok).SetQueryParamsFromValues(query).
			Execute(method, c.cfg.APIURL+path)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err = fmt.Errorf("zoom %s: %w", op, err)
		case resp.StatusCode() == http.StatusUnauthorized && !refreshed:
			c.tokens.invalidate(tok)
			refreshed = true
			attempt--
			continue
		case resp.StatusCode() < 300:
			if out == nil || len(resp.Body()) == 0 {
				return nil
			}
			if err := json.Unmarshal(resp.Body(), out); err != nil {
				return fmt.Errorf("zoom %s: decode: %w", op, err)
			}
			return nil
		default:
			e := &APIError{Status: resp.StatusCode(), Op: op}
			json.Unmarshal(resp.Body(), e)
			err = e
			if e.Status == http.StatusTooManyRequests {
				wait = retryAfter(resp.Header().Get("Retry-After"), c.cfg.Now())
			} else if e.Status < 500 {
				return e
			}
		}
		if attempt >= maxAttempts {
			return err
		}
		if wait == 0 {
			wait = rand.N(min(30*time.Second, c.cfg.MinBackoff<<(attempt-1))) + time.Millisecond
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retryAfter reads Retry-After as seconds or an HTTP date; 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	} else {
		return 0
	}
	return min(max(d, time.Millisecond), 5*time.Minute)
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
