// Package api is the typed Go client of the transcription API: every endpoint of the reference,
// errors carrying the upstream code, retries with full jitter that honour Retry-After, idempotent
// streaming uploads in constant memory, list iterators, wait helpers, and client-side rate limits
// that keep a busy caller under the service's limits by construction.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-resty/resty/v2"
	"golang.org/x/time/rate"

	"github.com/transcript-bridge/bridge/internal/retry"
)

// Config configures a Client. Zero values take the defaults named on each field.
type Config struct {
	// BaseURL ends with the versioned developer prefix, e.g. https://host/developer/v1. Required.
	BaseURL string
	// Key is the API key (mk_live_...). Required. It is sent only in the Authorization header
	// and never appears in errors or logs.
	Key string
	// HTTPClient sends the requests (default: a client with sane transport timeouts and no
	// overall timeout, since uploads may last long; contexts bound each call).
	HTTPClient *http.Client
	// MaxAttempts bounds the tries of one call, the first included (default 8).
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the exponential backoff with full jitter (defaults 500 ms, 30 s).
	MinBackoff, MaxBackoff time.Duration
	// UnreachableTimeout is how long one call keeps retrying while no connection can be made
	// at all (connection refused, unknown host, no route); then it fails with an
	// *UnreachableError naming the base URL (default 5 s). A server that answers, even with
	// errors, is retried up to MaxAttempts as usual.
	UnreachableTimeout time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits inside a call; a longer one (a
	// daily quota pointing to midnight) is returned to the caller at once (default 2 min).
	MaxRetryAfter time.Duration
	// DataPerMinute and DeletesPerMinute are the client-side rate limits per key (defaults 500
	// and 30, the reference's figures). Negative disables the limiter.
	DataPerMinute, DeletesPerMinute int
	// RateWindow is the span DataPerMinute and DeletesPerMinute count over (default a minute,
	// the service's). Only a sandbox whose limits run on a faster clock (sandbox.Options
	// RateWindow, for a short benchmark) calls for another.
	RateWindow time.Duration
	// MaxConcurrentUploads caps simultaneous uploads (default 10, the reference's per-key cap).
	MaxConcurrentUploads int
	// PollMin and PollMax bound the jittered polling interval of Wait (defaults 5 s and 10 s).
	PollMin, PollMax time.Duration
	// UserAgent is sent with every request (default "transcript-bridge").
	UserAgent string
	// Metrics hears every request, the limiter's waits and the bytes uploaded (nil: nothing).
	Metrics Metrics
}

// CloseIdleConnections closes the connections the client keeps alive between requests; those
// in use are left alone.
func (c *Client) CloseIdleConnections() { c.r.GetClient().CloseIdleConnections() }

// IdleConnsPerHost is how many kept-alive connections the default client keeps idle for the
// service's host, each for 90 s: the most a quiet client holds open.
const IdleConnsPerHost = 16

func (c *Config) setDefaults() {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   15 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute, // a 2 GB body is received before the answer
			ExpectContinueTimeout: 3 * time.Second,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   IdleConnsPerHost,
		}}
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 8
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = 500 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.UnreachableTimeout == 0 {
		c.UnreachableTimeout = 5 * time.Second
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = 2 * time.Minute
	}
	if c.DataPerMinute == 0 {
		c.DataPerMinute = 500
	}
	if c.DeletesPerMinute == 0 {
		c.DeletesPerMinute = 30
	}
	if c.RateWindow <= 0 {
		c.RateWindow = time.Minute
	}
	if c.MaxConcurrentUploads == 0 {
		c.MaxConcurrentUploads = 10
	}
	if c.PollMin == 0 {
		c.PollMin = 5 * time.Second
	}
	if c.PollMax == 0 {
		c.PollMax = 10 * time.Second
	}
	if c.UserAgent == "" {
		c.UserAgent = "transcript-bridge"
	}
}

// Validate reports the first field that is missing or out of range.
func (c *Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		return errors.New("api: base URL is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("api: base URL %q is not an http(s) URL", c.BaseURL)
	case u.User != nil || u.RawQuery != "":
		return errors.New("api: base URL must not carry credentials or a query")
	case c.Key == "":
		return errors.New("api: key is required")
	case strings.ContainsAny(c.Key, " \r\n\t"):
		return errors.New("api: key contains whitespace")
	case c.MaxAttempts < 1:
		return errors.New("api: max attempts must be at least 1")
	case c.MinBackoff > c.MaxBackoff:
		return errors.New("api: min backoff exceeds max backoff")
	case c.PollMin > c.PollMax:
		return errors.New("api: poll min exceeds poll max")
	}
	return nil
}

// Client is the transcription API client. It is safe for concurrent use.
type Client struct {
	cfg       Config
	r         *resty.Client
	base      string
	data      *rate.Limiter
	deletes   *rate.Limiter
	uploadSem chan struct{}
	retry     retry.Policy
	// lastAnswer is when the API last answered (Unix nanoseconds; see LastAnswer).
	lastAnswer atomic.Int64
	// spentAt is when a request that is not background work last found the data budget spent
	// (Unix nanoseconds; see Contended).
	spentAt atomic.Int64
	// now is the clock of Contended (nil: time.Now), for tests.
	now func() time.Time
}

// New returns a client; it fails when the configuration is incomplete.
func New(cfg Config) (*Client, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	r := resty.NewWithClient(cfg.HTTPClient).
		SetBaseURL(base).
		SetAuthToken(cfg.Key).
		SetHeader("User-Agent", cfg.UserAgent).
		SetHeader("Accept", "application/json").
		SetRetryCount(0) // retries are internal/retry's: they honour Retry-After and idempotency
	return &Client{
		cfg:       cfg,
		r:         r,
		base:      base,
		data:      limiter(cfg.DataPerMinute, cfg.RateWindow),
		deletes:   limiter(cfg.DeletesPerMinute, cfg.RateWindow),
		uploadSem: make(chan struct{}, cfg.MaxConcurrentUploads),
		retry: retry.Policy{MaxAttempts: cfg.MaxAttempts, MinBackoff: cfg.MinBackoff, MaxBackoff: cfg.MaxBackoff,
			MaxRetryAfter: cfg.MaxRetryAfter},
	}, nil
}

// limiter allows at most perMinute requests in any window of the given span (a minute): a
// token bucket of a fiftieth of the figure, refilled at the figure less two fiftieths per
// window, so that a full bucket plus a window of refill stays a fiftieth under perMinute (500/min:
// bursts of 10, then 480/min sustained). The fiftieth kept free absorbs the difference between
// when the client sends and when the service counts (requests that overtake each other on the
// way): a backfill at the limit is answered no 429 (bridge bench backfill). Uploads and the
// tracker share it; the tracker yields while uploads queue (Contended).
func limiter(perMinute int, window time.Duration) *rate.Limiter {
	if perMinute < 0 {
		return nil
	}
	burst, margin := max(1, perMinute/50), perMinute/50
	return rate.NewLimiter(rate.Limit(float64(perMinute-burst-margin)/window.Seconds()), burst)
}

const (
	classData   = "data"
	classDelete = "delete"
)

func (c *Client) wait(ctx context.Context, class string) error {
	l := c.data
	if class == classDelete {
		l = c.deletes
	}
	if l == nil {
		return nil
	}
	if class == classData {
		c.noteBudget(ctx, l)
	}
	start := time.Now()
	err := l.Wait(ctx)
	c.waited(class, time.Since(start))
	return err
}

// call is one API operation.
type call struct {
	op     string // names the operation in errors: "get transcription 1234"
	method string
	path   string
	route  string // the path as a template, for metrics: "/transcriptions/{id}"
	query  url.Values
	body   any
	class  string
	out    any  // decoded from a 2xx JSON answer
	stream bool // keep the answer's body open for the caller
	// goneOK treats a 404 after a failed attempt as success (a retried DELETE whose first
	// attempt landed).
	goneOK bool
}

// do runs a call under the client's retry policy and returns the final answer (2xx). Errors
// are wrapped with the operation; the *Error inside carries the status and upstream code.
func (c *Client) do(ctx context.Context, cl call) (*resty.Response, error) {
	var reach reachability
	var answer *resty.Response
	attempt := 0
	err := c.retry.Do(ctx, func() error {
		attempt++
		if err := c.wait(ctx, cl.class); err != nil {
			return retry.Permanent(err)
		}
		req := c.r.R().SetContext(ctx).SetDoNotParseResponse(true)
		if cl.query != nil {
			req.SetQueryParamsFromValues(cl.query)
		}
		if cl.body != nil {
			req.SetHeader("Content-Type", "application/json").SetBody(cl.body)
		}
		resp, err := req.Execute(cl.method, cl.path)
		status := 0
		if err == nil {
			status = resp.StatusCode()
		}
		c.answered(ctx, cl.route, cl.method, status)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return retry.Permanent(ctx.Err())
			}
			return c.transportFailure(scrub(err, c.cfg.Key), &reach)
		case resp.StatusCode() >= 200 && resp.StatusCode() < 300:
			if !cl.stream {
				defer resp.RawBody().Close()
			}
			if !cl.stream && cl.out != nil {
				if err := json.NewDecoder(resp.RawBody()).Decode(cl.out); err != nil {
					return retry.Permanent(fmt.Errorf("decode answer: %w", err))
				}
			}
			answer = resp
			return nil
		}
		apiErr := readError(resp.RawResponse)
		if cl.goneOK && attempt > 1 && apiErr.Status == http.StatusNotFound {
			answer = resp
			return nil
		}
		return c.answerFailure(apiErr, &reach)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cl.op, err)
	}
	return answer, nil
}

// transportFailure classifies a request that got no answer for the retry policy: retried when
// it may pass, until the API has been unreachable for UnreachableTimeout (then an
// *UnreachableError), and never waiting past that moment.
func (c *Client) transportFailure(err error, reach *reachability) error {
	if !retryableNetErr(err) {
		return retry.Permanent(err)
	}
	if uerr := reach.fail(err, c.base, c.cfg.UnreachableTimeout); uerr != nil {
		return retry.Permanent(uerr)
	}
	return reach.bound(err, c.cfg.UnreachableTimeout)
}

// answerFailure classifies an error answer for the retry policy: retried with its Retry-After
// when retryableStatus says so, else final.
func (c *Client) answerFailure(apiErr *Error, reach *reachability) error {
	reach.fail(apiErr, c.base, c.cfg.UnreachableTimeout) // it answered: reachable
	if !retryableStatus(apiErr) {
		return retry.Permanent(apiErr)
	}
	return retry.After(apiErr, apiErr.RetryAfter)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryableStatus: 429, 5xx, 408 and 409 idempotency_conflict are retried; every other 4xx is
// final.
func retryableStatus(e *Error) bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status >= 500, e.Status == http.StatusRequestTimeout:
		return true
	case e.Status == http.StatusConflict && e.Code == "idempotency_conflict":
		return true
	}
	return false
}

// retryableNetErr reports transport failures worth another attempt: resets, refused or broken
// connections, unexpected EOFs and timeouts.
func retryableNetErr(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE), errors.As(err, &ne):
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) // any other transport failure of a request that never got an answer
}

// readError turns a non-2xx answer into *Error, keeping unknown codes verbatim. It reads at
// most 64 KiB of the body and closes it.
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	e := &Error{Status: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var wire struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Detail  map[string]any `json:"detail"`
	}
	if json.Unmarshal(body, &wire) == nil {
		e.Code, e.Message, e.Detail = wire.Code, wire.Message, wire.Detail
	} else if len(body) > 0 {
		e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.RetryAfter, _ = retry.ParseAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}
