package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// Message is one event to send: its webhook-id stays the same on every attempt.
type Message struct {
	// ID is the webhook-id (msg_...).
	ID string
	// Type is the event type.
	Type string
	// Time is when the event happened.
	Time time.Time
	// Data is the event's data before the endpoint's transform.
	Data any
}

// Result is what one attempt got.
type Result struct {
	// Status is the HTTP status (0 when no answer came).
	Status int
	// Latency is the time to the answer.
	Latency time.Duration
	// Body is the start of the answer, for the attempt log (at most 1 KiB).
	Body string
	// RetryAfter is the endpoint's Retry-After, zero when absent.
	RetryAfter time.Duration
	// Skipped is true when the endpoint's filter dropped the message (nothing was sent).
	Skipped bool
}

// OK reports a 2xx answer.
func (r Result) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Send makes one signed attempt of m to e with client, at now (the webhook-timestamp). A
// transport failure (refused address, timeout) is returned as the error.
func Send(ctx context.Context, client *http.Client, e *Endpoint, m Message, now time.Time) (Result, error) {
	body, skipped, err := e.encode(m)
	if err != nil || skipped {
		return Result{Skipped: skipped}, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("webhook %s: %w", e.Name, err)
	}
	for k, v := range e.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range webhook.Headers(m.ID, now, body, e.Secrets...) {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "transcript-bridge-webhooks")
	start := time.Now()
	resp, err := client.Do(req)
	res := Result{Latency: time.Since(start)}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = RedactURL(ue.URL) // a token in the query must not reach the attempt log
		}
		return res, fmt.Errorf("webhook %s: %w", e.Name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	res.Status, res.Body = resp.StatusCode, string(b)
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		res.RetryAfter = time.Duration(secs) * time.Second
	}
	return res, nil
}

// envelope is a message's body: the fields in the order json.Marshal gives a map's keys, so
// the bytes are the same whichever way it is encoded.
type envelope struct {
	Data      any    `json:"data"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
}

// encode returns the body of m for e, encoded once; skipped is true when e's filter drops m.
// Only an endpoint with a jq filter or transform decodes it again, for the programs to read.
func (e *Endpoint) encode(m Message) (body []byte, skipped bool, err error) {
	ts := m.Time.UTC().Format(time.RFC3339Nano)
	if raw, ok := m.Data.(json.RawMessage); ok {
		// Already encoded (a thin payload): the envelope around it, without a second pass
		// over the data.
		typ, _ := json.Marshal(m.Type)
		body = make([]byte, 0, len(raw)+len(ts)+len(typ)+32)
		body = append(append(append(body, `{"data":`...), raw...), `,"timestamp":"`...)
		body = append(append(append(body, ts...), `","type":`...), typ...)
		body = append(body, '}')
	} else if body, err = json.Marshal(envelope{Data: m.Data, Timestamp: ts, Type: m.Type}); err != nil {
		return nil, false, fmt.Errorf("webhook %s: encode %s: %w", e.Name, m.ID, err)
	}
	if e.filter == nil && e.transform == nil {
		return body, false, nil
	}
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, false, err
	}
	data, ok, err := e.Shape(msg)
	if err != nil || !ok {
		return nil, !ok && err == nil, err
	}
	msg["data"] = data
	if body, err = json.Marshal(msg); err != nil {
		return nil, false, fmt.Errorf("webhook %s: encode %s: %w", e.Name, m.ID, err)
	}
	return body, false, nil
}

// RedactURL keeps scheme, host and path of u and hides its query and credentials, which may hold
// tokens.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "[unparsable URL]"
	}
	p.User = nil
	if p.RawQuery != "" {
		p.RawQuery = "redacted"
	}
	p.Fragment = ""
	return p.String()
}
