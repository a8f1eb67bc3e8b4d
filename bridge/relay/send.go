package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/tracing"
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

// Send makes one signed attempt of m to e with client, at now (the webhook-timestamp), within
// e's Timeout (or ctx's deadline, if earlier). A transport failure (refused address, timeout)
// is returned as the error.
func Send(ctx context.Context, client *http.Client, e *Endpoint, m Message, now time.Time) (Result, error) {
	body, skipped, err := e.encode(m)
	if err != nil || skipped {
		return Result{Skipped: skipped}, err
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > e.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	req, err := e.request(ctx, body)
	if err != nil {
		return Result{}, fmt.Errorf("webhook %s: %w", e.Name, err)
	}
	webhook.SetHeaders(req.Header, m.ID, now, body, e.Secrets...)
	tracing.Inject(ctx, req.Header) // traceparent, when the attempt is traced
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
	start1K := answerStarts.Get().(*[1024]byte)
	defer answerStarts.Put(start1K)
	n, _ := io.ReadFull(resp.Body, start1K[:])
	if resp.ContentLength >= 0 && resp.ContentLength <= 64<<10 {
		io.Copy(io.Discard, resp.Body) // the rest of a short answer, so the connection is reused
	}
	res.Status, res.Body = resp.StatusCode, string(start1K[:n])
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		res.RetryAfter = time.Duration(secs) * time.Second
	}
	return res, nil
}

// answerStarts holds the buffers an answer's first KiB is read into: read through an
// interface, a buffer on the stack would escape, 1 KiB of garbage per attempt.
var answerStarts = sync.Pool{New: func() any { return new([1024]byte) }}

// request returns the POST of body to e: its URL parsed once, its own headers, the JSON content
// type and the bridge's User-Agent set. It fails only for an Endpoint not made by NewEndpoint
// whose URL does not parse.
func (e *Endpoint) request(ctx context.Context, body []byte) (*http.Request, error) {
	target, header := e.target, e.header
	if target == nil {
		var err error
		if target, err = url.Parse(e.URL); err != nil {
			return nil, err
		}
		header = staticHeader(e.Headers)
	}
	u := *target
	req := (&http.Request{Method: http.MethodPost, URL: &u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, len(header)+3), Body: io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)), Host: strings.TrimSuffix(u.Host, ":")}).WithContext(ctx) // as NewRequest: no empty port
	maps.Copy(req.Header, header)
	return req, nil
}

// staticHeader returns the headers every request to an endpoint carries: its own (headers),
// then the JSON content type and the bridge's User-Agent over them.
func staticHeader(headers map[string]string) http.Header {
	h := make(http.Header, len(headers)+2)
	for k, v := range headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "transcript-bridge-webhooks")
	return h
}

// envelope is a message's body: the fields in the order json.Marshal gives a map's keys, so
// the bytes are the same whichever way it is encoded.
type envelope struct {
	Data      any    `json:"data"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
}

// encoded is a message body encoded whole (a thin payload's: the same for every endpoint
// and attempt of its event, built by envelopeOf), sent as it is.
type encoded []byte

// envelopeOf returns the body of a message whose data is already encoded (raw): the envelope
// around it, without a second pass over the data.
func envelopeOf(raw []byte, typ string, at time.Time) []byte {
	ts := at.UTC().Format(time.RFC3339Nano)
	t, _ := json.Marshal(typ)
	body := make([]byte, 0, len(raw)+len(ts)+len(t)+32)
	body = append(append(append(body, `{"data":`...), raw...), `,"timestamp":"`...)
	body = append(append(append(body, ts...), `","type":`...), t...)
	return slices.Clip(append(body, '}')) // shared: an append makes a copy
}

// encode returns the body of m for e, encoded once; skipped is true when e's filter drops m.
// Only an endpoint with a jq filter or transform decodes it again, for the programs to read.
func (e *Endpoint) encode(m Message) (body []byte, skipped bool, err error) {
	switch data := m.Data.(type) {
	case encoded:
		body = data // shared: read only
	case json.RawMessage:
		body = envelopeOf(data, m.Type, m.Time)
	default:
		body, err = json.Marshal(envelope{Data: m.Data, Timestamp: m.Time.UTC().Format(time.RFC3339Nano), Type: m.Type})
		if err != nil {
			return nil, false, fmt.Errorf("webhook %s: encode %s: %w", e.Name, m.ID, err)
		}
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
