package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/httpenv"
	"github.com/transcript-bridge/bridge/internal/retry"
)

// GraphError is an answer Microsoft Graph refused, with its error code and message verbatim.
type GraphError struct {
	// Op is what was asked ("list users", "recordings of sam@acme.test").
	Op string
	// Status is the HTTP status.
	Status int
	// Code and Message are Graph's error.code and error.message.
	Code, Message string
	// Missing names what a 403 says is missing (a permission, the application access policy);
	// empty for other answers.
	Missing string
	// RetryAfter is the wait a 429 or 503 asked for (zero: none).
	RetryAfter time.Duration
}

// Error implements error: the operation, the status, Graph's code and message, and for a 403
// what is missing.
func (e *GraphError) Error() string {
	s := fmt.Sprintf("graph %s: %d %s: %s", e.Op, e.Status, e.Code, e.Message)
	if e.Missing != "" {
		s += " (needs " + e.Missing + ")"
	}
	return s
}

// The access a call needs, named in the error of a 403.
const (
	needUsers      = "the application permission User.Read.All, with admin consent"
	needRecordings = "the application permission OnlineMeetingRecording.Read.All, with admin consent"
	needCalls      = "the application permission CallRecordings.Read.All, with admin consent"
	needGroups     = "the application permission GroupMember.Read.All, with admin consent"
)

// policyFix is the Teams PowerShell that grants the app an application access policy
// (https://learn.microsoft.com/graph/cloud-communication-online-meeting-application-access-policy).
const policyFix = "in Teams PowerShell, New-CsApplicationAccessPolicy -Identity bridge-recordings -AppIds <client_id>, " +
	"then Grant-CsApplicationAccessPolicy -PolicyName bridge-recordings -Global (or -Identity <organizer>); it takes effect within about 30 minutes"

// needPolicy is what a 403 of a recordings call means is missing: an application access policy
// when Graph says so, else the permission (need) and the policy.
func needPolicy(organizer, message, need string) string {
	policy := "an application access policy granted to " + organizer + " (New-CsApplicationAccessPolicy -AppIds <client_id>, " +
		"then Grant-CsApplicationAccessPolicy -Identity <organizer> or -Global)"
	if strings.Contains(strings.ToLower(message), "application access policy") {
		return policy
	}
	return need + ", and " + policy
}

// tokens caches the client-credentials token: renewed five minutes before it expires and at
// once after a 401. The token is never logged.
type tokens struct {
	cfg clientcredentials.Config
	hc  *http.Client

	mu  sync.Mutex
	tok *oauth2.Token
}

// get returns a token valid for at least five more minutes.
func (t *tokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && time.Until(t.tok.Expiry) > 5*time.Minute {
		return t.tok.AccessToken, nil
	}
	tok, err := t.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, t.hc))
	if err != nil {
		return "", fmt.Errorf("teams oauth (client_credentials): %w (check tenant_id, client_id and the client secret)", err)
	}
	t.tok = tok
	return tok.AccessToken, nil
}

// invalidate drops token after a 401, unless a newer one replaced it already.
func (t *tokens) invalidate(token string) {
	t.mu.Lock()
	if t.tok != nil && t.tok.AccessToken == token {
		t.tok = nil
	}
	t.mu.Unlock()
}

// client calls Microsoft Graph: a bearer token from the client-credentials flow, 401 answered
// with a fresh token once, 429 and 5xx retried under the module's retry policy (Retry-After
// honoured, up to two minutes inside one call).
type client struct {
	cfg    Config
	api    *http.Client
	files  *http.Client // recordings' content: no overall timeout, only one for the headers
	tokens *tokens
}

func newClient(c Config) *client {
	files := httpenv.Transport() // HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as every call
	files.ResponseHeaderTimeout = time.Minute
	// Graph's token goes to graph_url's host only: never along a redirect elsewhere, and never
	// to the pre-authenticated location a recording's content redirects to.
	graph := &connectors.HostRule{Hosts: []string{hostOf(c.GraphURL)}}
	api := httpenv.Client(60 * time.Second)
	api.CheckRedirect = connectors.KeepCredentials(graph)
	return &client{cfg: c, api: api, files: &http.Client{Transport: files, CheckRedirect: connectors.KeepCredentials(nil)},
		tokens: &tokens{hc: httpenv.Client(60 * time.Second), cfg: clientcredentials.Config{
			ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: oauth2.AuthStyleInParams,
			TokenURL: c.LoginURL + "/" + c.TenantID + "/oauth2/v2.0/token", Scopes: []string{c.GraphURL + "/.default"}}}}
}

// hostOf returns the host (and port) of a URL, "" when it has none.
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// call is one Graph request.
type call struct {
	op, method, url string
	body            any         // sent as JSON when not nil
	header          http.Header // sent besides the token (ConsistencyLevel)
	// need is what a 403 means is missing; forbidden, when set, decides it from Graph's message.
	need      string
	forbidden func(message string) string
}

// do sends c and decodes the JSON answer into out (when not nil), under the retry policy: 429
// and 5xx wait Retry-After or back off, a 401 is sent again once with a fresh token, other
// refusals are returned at once as a *GraphError.
func (cl *client) do(ctx context.Context, c call, out any) error {
	if !strings.HasPrefix(c.url, cl.cfg.GraphURL+"/") { // a link from an answer or a cursor
		return fmt.Errorf("graph %s: %q is not under graph_url %s", c.op, c.url, cl.cfg.GraphURL)
	}
	p := retry.Policy{MaxAttempts: cl.cfg.MaxAttempts, MinBackoff: cl.cfg.MinBackoff, MaxBackoff: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}
	refreshed := false
	return p.Do(ctx, func() error {
		for {
			resp, tok, err := cl.send(ctx, c)
			if err != nil {
				return err
			}
			if resp.StatusCode == http.StatusUnauthorized && !refreshed {
				resp.Body.Close()
				cl.tokens.invalidate(tok)
				refreshed = true
				continue // sent again with a fresh token: not an attempt of its own
			}
			return cl.answer(resp, c, out)
		}
	})
}

// send makes one request of c with a token.
func (cl *client) send(ctx context.Context, c call) (*http.Response, string, error) {
	tok, err := cl.tokens.get(ctx)
	if err != nil {
		return nil, "", retry.Permanent(tokenErr(err))
	}
	var body io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return nil, "", retry.Permanent(fmt.Errorf("graph %s: %w", c.op, err))
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, "", retry.Permanent(fmt.Errorf("graph %s: %w", c.op, err))
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.api.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", retry.Permanent(ctx.Err())
		}
		return nil, "", fmt.Errorf("graph %s: %w", c.op, err)
	}
	return resp, tok, nil
}

// answer decodes a 2xx answer into out, or classifies Graph's refusal for the retry policy.
func (cl *client) answer(resp *http.Response, c call, out any) error {
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		if out == nil || resp.StatusCode == http.StatusNoContent {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return retry.Permanent(fmt.Errorf("graph %s: decode: %w", c.op, err))
		}
		return nil
	}
	e := graphError(resp, c, cl.cfg.Now())
	if connectors.TransientStatus(e.Status) {
		return retry.After(e, e.RetryAfter)
	}
	return retry.Permanent(e)
}

// graphError reads Graph's error answer: {"error": {"code", "message"}}.
func graphError(resp *http.Response, c call, now time.Time) *GraphError {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	e := &GraphError{Op: c.op, Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message,
		RetryAfter: connectors.RetryAfter(resp.Header.Get("Retry-After"), now)}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if e.Status == http.StatusForbidden {
		e.Missing = c.need
		if c.forbidden != nil {
			e.Missing = c.forbidden(e.Message)
		}
	}
	return e
}

// tokenErr classifies a failure to get a token: a network failure or an answer of 429 or 5xx
// from the token endpoint may pass; a refusal (bad credentials) does not.
func tokenErr(err error) error {
	var re *oauth2.RetrieveError
	if connectors.NetFailure(err) || errors.As(err, &re) && re.Response != nil && connectors.TransientStatus(re.Response.StatusCode) {
		return connectors.Transient(err, 0)
	}
	return err
}

// asGraph returns the *GraphError in err's chain, or nil.
func asGraph(err error) *GraphError {
	var e *GraphError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// classify marks a failure of Open: a refusal about the account (402, or a 403 saying a
// licence or the application access policy is missing: connectors.BlockedStatus) as
// connectors.Blocked, so the job waits rather than fails; one that may pass (429, 5xx with its
// Retry-After, a network failure, the token endpoint failing so) as connectors.ErrTransient.
// Anything else is returned as it is.
func classify(ctx context.Context, err error) error {
	switch e := asGraph(err); {
	case ctx.Err() != nil || err == nil:
		return err
	case e != nil:
		if blocked(e) {
			return connectors.Blocked(err, e.RetryAfter)
		}
		if connectors.TransientStatus(e.Status) {
			return connectors.Transient(err, e.RetryAfter)
		}
		return err
	case errors.Is(err, connectors.ErrTransient):
		return err
	case connectors.NetFailure(err):
		return connectors.Transient(err, 0)
	}
	return err
}

// blocked reports whether Graph refused about the account rather than the request: any 402
// (https://learn.microsoft.com/graph/errors: "The payment requirements for the API haven't
// been met"), a 403 whose code or message names a licence or the application access policy.
func blocked(e *GraphError) bool {
	return connectors.BlockedStatus(e.Status, e.Code+": "+e.Message)
}
