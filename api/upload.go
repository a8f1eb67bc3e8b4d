package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/internal/retry"
)

// UploadParams describe one upload. The body is streamed with its Content-Length and never
// buffered: memory does not grow with the file.
type UploadParams struct {
	// Filename is sent in Content-Disposition (RFC 5987 form for non-ASCII names); its extension
	// decides the format and it becomes the title.
	Filename string
	// Size is the exact byte count of the body. Required.
	Size int64
	// Open returns the body afresh for each attempt, so uploads can be retried. When nil, Body
	// is used: rewound between attempts when it is an io.Seeker, else sent at most once.
	Open func() (io.ReadCloser, error)
	// Body is the body when Open is nil.
	Body io.Reader
	// IdempotencyKey is reused by every attempt; generated (a UUID) when empty. Give the same key
	// again after a crash to have the service answer with the original transcription.
	IdempotencyKey string
	// ExternalID is sent as X-External-Id (validated first).
	ExternalID string
	// Metadata is sent as X-Metadata: anything that encodes as a JSON object (validated first).
	Metadata any
	// Author is sent as X-Author: email:<e-mail>, user:<uuid> or external:<provider>:<id>.
	Author string
	// Language is auto or a code; ProjectID a project UUID.
	Language, ProjectID string
	// Diarize turns speaker separation off when set to false (default on).
	Diarize *bool
	// SpeakersCount hints the number of speakers, 1 to 20 (0: not sent).
	SpeakersCount int
	// AIMetadata asks for the AI layer (title, summary, topics, speaker names).
	AIMetadata bool
	// Reports are template slugs to generate, at most 3.
	Reports []string
	// Progress, when set, is called as bytes go out (sent, total) on every attempt.
	Progress func(sent, total int64)
}

// ErrNotRetryable marks an upload that failed after its single-use body was consumed: it may
// have landed. Retry it with the same IdempotencyKey and a fresh body.
var ErrNotRetryable = errors.New("the body cannot be sent again")

// validate checks everything the reference lets a client check before sending a byte and
// returns the headers and query.
func (p *UploadParams) validate() (http.Header, url.Values, error) {
	h, q := http.Header{}, url.Values{}
	if strings.TrimSpace(p.Filename) == "" {
		return nil, nil, &ValidationError{"filename", "filename_required", "a file name is required"}
	}
	if p.Size < MinUploadBytes {
		return nil, nil, &ValidationError{"size", "file_too_small", fmt.Sprintf("%d bytes; at least %d", p.Size, MinUploadBytes)}
	}
	if p.Size > MaxUploadBytes {
		return nil, nil, &ValidationError{"size", "file_size_limit_exceeded", fmt.Sprintf("%d bytes; at most %d", p.Size, int64(MaxUploadBytes))}
	}
	if p.Open == nil && p.Body == nil {
		return nil, nil, &ValidationError{"body", "body_required", "Open or Body is required"}
	}
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(p.Filename)}))
	if p.ExternalID != "" {
		if err := ValidateExternalID(p.ExternalID); err != nil {
			return nil, nil, err
		}
		h.Set("X-External-Id", p.ExternalID)
	}
	if p.Metadata != nil {
		var raw string
		var err error
		if r, ok := p.Metadata.(json.RawMessage); ok {
			raw, err = string(r), ValidateMetadata(r)
		} else {
			raw, err = EncodeMetadata(p.Metadata)
		}
		if err != nil {
			return nil, nil, err
		}
		h.Set("X-Metadata", raw)
	}
	if p.Author != "" {
		if err := ValidateAuthor(p.Author, true); err != nil {
			return nil, nil, err
		}
		h.Set("X-Author", p.Author)
	}
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = uuid.NewString()
	}
	h.Set("Idempotency-Key", p.IdempotencyKey)
	if p.Language != "" {
		q.Set("language", p.Language)
	}
	if p.ProjectID != "" {
		q.Set("project_id", p.ProjectID)
	}
	if p.Diarize != nil {
		q.Set("diarize", strconv.FormatBool(*p.Diarize))
	}
	if p.SpeakersCount != 0 {
		if p.SpeakersCount < 1 || p.SpeakersCount > 20 {
			return nil, nil, &ValidationError{"speakers_count", "invalid_speakers_count", fmt.Sprintf("%d is not 1 to 20", p.SpeakersCount)}
		}
		q.Set("speakers_count", strconv.Itoa(p.SpeakersCount))
	}
	if p.AIMetadata {
		q.Set("ai_metadata", "true")
	}
	if len(p.Reports) > 3 {
		return nil, nil, &ValidationError{"reports", "too_many_reports", fmt.Sprintf("%d slugs; at most 3", len(p.Reports))}
	}
	if len(p.Reports) > 0 {
		q.Set("reports", strings.Join(p.Reports, ","))
	}
	return h, q, nil
}

// UploadFile uploads the file at path; the file is reopened for every attempt.
func (c *Client) UploadFile(ctx context.Context, path string, p UploadParams) (*UploadResult, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("upload %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("upload %s: not a regular file", path)
	}
	p.Size = st.Size()
	if p.Filename == "" {
		p.Filename = filepath.Base(path)
	}
	p.Open = func() (io.ReadCloser, error) { return os.Open(path) }
	p.Body = nil
	return c.Upload(ctx, p)
}

// Upload sends one file. Every attempt carries the same Idempotency-Key, so retries after
// network errors, 429, 5xx and 409 idempotency_conflict never duplicate a transcription; a 200
// answer is the original upload's success (Replayed). Other 4xx are returned at once.
func (c *Client) Upload(ctx context.Context, p UploadParams) (*UploadResult, error) {
	header, query, err := p.validate()
	op := "upload " + p.Filename
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	select {
	case c.uploadSem <- struct{}{}:
		defer func() { <-c.uploadSem }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", op, ctx.Err())
	}
	target := c.base + "/transcriptions"
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var reach reachability
	var res *UploadResult
	consumed := false // whether an attempt has read from Body
	err = c.retry.Do(ctx, func() error {
		if err := c.wait(ctx, classData); err != nil {
			return retry.Permanent(err)
		}
		r, sent, err := c.uploadOnce(ctx, target, header, &p, consumed)
		consumed = consumed || sent > 0
		if err == nil {
			res = r
			return nil
		}
		return c.uploadFailure(ctx, err, sent, &p, &reach)
	})
	var exhausted *retry.ExhaustedError
	switch {
	case err == nil:
		res.IdempotencyKey = p.IdempotencyKey
		return res, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &exhausted),
		errors.Is(err, ErrUnreachable), errors.Is(err, ErrNotRetryable):
		// The upload may have landed: the key lets the caller ask, or send it again safely.
		return nil, fmt.Errorf("%s (Idempotency-Key %s): %w", op, p.IdempotencyKey, err)
	}
	return nil, fmt.Errorf("%s: %w", op, err)
}

// uploadFailure classifies a failed attempt for the retry policy. Network failures, 429, 5xx
// and 409 idempotency_conflict are retried (with the answer's Retry-After) while the API is
// reachable and the body can be sent again; failures of the caller's body, other answers and
// a single-use body already (partly) sent are final.
func (c *Client) uploadFailure(ctx context.Context, err error, sent int64, p *UploadParams, reach *reachability) error {
	var apiErr *Error
	switch {
	case ctx.Err() != nil, errors.Is(err, ErrSource):
		return retry.Permanent(err)
	case errors.As(err, &apiErr):
		if !retryableStatus(apiErr) || apiErr.RetryAfter > c.cfg.MaxRetryAfter {
			return retry.Permanent(apiErr)
		}
	case !retryableNetErr(err):
		return retry.Permanent(err)
	}
	if uerr := reach.fail(err, c.base, c.cfg.UnreachableTimeout); uerr != nil {
		return retry.Permanent(uerr)
	}
	if sent > 0 && p.Open == nil {
		if _, ok := p.Body.(io.Seeker); !ok {
			return retry.Permanent(fmt.Errorf("%w after %d bytes: %w", ErrNotRetryable, sent, err))
		}
	}
	if apiErr != nil {
		return retry.After(apiErr, apiErr.RetryAfter)
	}
	return reach.bound(err, c.cfg.UnreachableTimeout)
}

// ErrSource marks a failure of the caller's body (cannot be opened, unreadable, shorter than
// Size): it is not retried.
var ErrSource = errors.New("upload source")

// uploadOnce makes one attempt with plain net/http: resty would read the body into memory.
func (c *Client) uploadOnce(ctx context.Context, target string, header http.Header, p *UploadParams, consumed bool) (*UploadResult, int64, error) {
	body, err := p.open(consumed)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrSource, err)
	}
	defer body.Close()
	cr := &countingReader{r: body, size: p.Size, progress: p.Progress, closed: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, cr)
	if err != nil {
		return nil, 0, err
	}
	req.ContentLength = p.Size
	req.GetBody = nil // the transport must not replay the body on its own
	req.Header = header.Clone()
	req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/octet-stream")
	// Ask before sending the body: refusals (409 in flight, 429, 402, 4xx) then cost no bytes and
	// leave a single-use body unread. A server that ignores it gets the body after the timeout.
	req.Header.Set("Expect", "100-continue")
	resp, err := c.cfg.HTTPClient.Do(req)
	// The transport may still be reading the body when Do returns with an error; it closes the
	// body when done. Only then are the counters settled and the source safe to rewind.
	select {
	case <-cr.closed:
	case <-time.After(time.Minute):
		return nil, 0, fmt.Errorf("%w: the HTTP transport did not release the body", ErrNotRetryable)
	}
	c.uploadSent(cr.n)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	c.answered(ctx, routeTranscriptions, http.MethodPost, status)
	if cr.err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, cr.n, fmt.Errorf("%w: %w", ErrSource, cr.err)
	}
	if err != nil {
		return nil, cr.n, scrub(err, c.cfg.Key)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, cr.n, readError(resp)
	}
	defer resp.Body.Close()
	var res UploadResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
		return nil, cr.n, fmt.Errorf("decode answer: %w", err)
	}
	res.Replayed = resp.StatusCode == http.StatusOK
	return &res, cr.n, nil
}

// open returns the body for an attempt; consumed tells whether an earlier attempt read from Body
// (a refusal before the body was sent, thanks to Expect: 100-continue, leaves it untouched).
func (p *UploadParams) open(consumed bool) (io.ReadCloser, error) {
	if p.Open != nil {
		return p.Open()
	}
	if consumed {
		s, ok := p.Body.(io.Seeker)
		if !ok {
			return nil, ErrNotRetryable
		}
		if _, err := s.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("rewind body: %w", err)
		}
	}
	return io.NopCloser(p.Body), nil
}

// countingReader counts bytes, reports progress and insists on exactly size bytes: a source
// that ends early is an error of the source, never a short upload. The transport closes it when
// it is done with the body.
type countingReader struct {
	r        io.Reader
	n, size  int64
	progress func(sent, total int64)
	err      error
	closed   chan struct{}
	once     sync.Once
}

// Close tells the uploader that the transport no longer reads the body; the source itself is
// closed by the uploader.
func (c *countingReader) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *countingReader) Read(b []byte) (int, error) {
	if rem := c.size - c.n; int64(len(b)) > rem {
		b = b[:rem]
	}
	if len(b) == 0 {
		return 0, io.EOF
	}
	n, err := c.r.Read(b)
	c.n += int64(n)
	if c.progress != nil && n > 0 {
		c.progress(c.n, c.size)
	}
	if err == io.EOF && c.n < c.size {
		c.err = fmt.Errorf("body ended after %d of %d bytes", c.n, c.size)
		return n, c.err
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}
