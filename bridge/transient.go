package bridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

// Source failures that may pass (connectors.ErrTransient, a network failure reading the source):
// retried with backoff and the same key until the source's retry deadline, then held.

// Delays of a failing source.
const (
	// sourceRecheck is how often a job held because its source kept failing is tried again.
	sourceRecheck = 3 * time.Hour
	// sourceBackoffMin and sourceBackoffMax bound the waits between tries of a failing source.
	sourceBackoffMin = 30 * time.Second
	sourceBackoffMax = 30 * time.Minute
)

// DefaultRetryDeadline is how long a source may keep failing in ways that may pass (HTML instead
// of media, a short body, 5xx, 429, network failures) before its job is held: counted from the
// first such failure, not from when the job was found.
const DefaultRetryDeadline = 72 * time.Hour

// ReasonSourceUnavailable begins the reason of a job held because its source kept failing past
// the source's retry deadline. Such a job is still tried every few hours.
const ReasonSourceUnavailable = "source_unavailable"

// reasonSourceRetry begins the history entry of each retried source failure; the first one of a
// series dates the retry deadline.
const reasonSourceRetry = "source unavailable, will retry with the same key"

// sourceTransient reports whether an upload failed on its source in a way that may pass: a
// failure the connector marked (connectors.ErrTransient), or a network failure reading it.
func sourceTransient(err error) bool {
	return errors.Is(err, connectors.ErrTransient) || errors.Is(err, api.ErrSource) && connectors.NetFailure(err)
}

// sourceFailed handles a source failure that may pass: the job keeps its key and is tried again
// with exponential backoff and jitter (no sooner than the source's Retry-After) until the
// source's retry deadline has passed since the first such failure; then it is held, announced
// once, and still tried every few hours. The series is read back from the job's history, so it
// survives restarts.
func (p *Pipeline) sourceFailed(ctx context.Context, j *Job, err error) error {
	now := p.now()
	since, failures, announced := p.sourceFailures(ctx, j, now)
	last := err.Error()
	var te *connectors.TransientError
	if errors.As(err, &te) {
		last = te.Err.Error() // the source's own words, without the upload's wrapping
	}
	deadline := DefaultRetryDeadline
	if sc := p.Sources[j.Source]; sc != nil && sc.RetryDeadline > 0 {
		deadline = sc.RetryDeadline
	}
	if now.Sub(since) >= deadline {
		// Source, item and error first: jobs list shows the beginning of a reason.
		what := last
		if !strings.Contains(last, j.ItemID) {
			what = "item " + j.ItemID + ": " + last
		}
		reason := fmt.Sprintf("%s: source %s: %s (failing for %s since %s; tried again every %s)",
			ReasonSourceUnavailable, j.Source, what, now.Sub(since).Round(time.Minute), since.Format(time.RFC3339), sourceRecheck)
		j.NextAt = now.Add(sourceRecheck)
		p.metrics().Upload(UploadHeld)
		var events []Event
		if !announced {
			events = append(events, NewEvent(EventHeld, j, map[string]any{"reason": reason, "code": ReasonSourceUnavailable}))
		}
		return p.hold(ctx, j, HoldSourceUnavailable, reason, events...)
	}
	p.metrics().Retry(RetryUpload)
	wait := sourceBackoff(failures, connectors.TransientWait(err))
	j.NextAt = now.Add(wait)
	return p.move(ctx, j, StateUploading, fmt.Sprintf("%s in %s: %s", reasonSourceRetry, wait.Round(time.Second), last))
}

// sourceFailures reads the job's history back from its latest change: since is when the current
// series of source failures began (now when this is the first), failures how many were retried,
// and announced whether the job was already held for it. A series ends, going back, at any
// change other than an upload attempt or a hold for the source (a release by hand, a return to
// mapping, an accepted upload): a job released starts a new one.
func (p *Pipeline) sourceFailures(ctx context.Context, j *Job, now time.Time) (since time.Time, failures int, announced bool) {
	since = now
	hist, err := p.Store.History(ctx, j.ID)
	if err != nil {
		p.log().Warn("history unreadable; the retry deadline counts from now", p.jobAttrs(j, "error", err)...)
		return since, 0, false
	}
	for i := len(hist) - 1; i >= 0; i-- {
		c := hist[i]
		switch {
		case c.To == StateUploading && strings.HasPrefix(c.Reason, reasonSourceRetry):
			since, failures = c.At, failures+1
		case c.To == StateHeld && strings.HasPrefix(c.Reason, ReasonSourceUnavailable+":"):
			announced = true
		case c.To == StateUploading:
			// another try of the same series: a new key, an upstream refusal retried
		default:
			return since, failures, announced
		}
	}
	return since, failures, announced
}

// sourceBackoff is the wait after the failures-th retried failure: exponential from
// sourceBackoffMin to sourceBackoffMax with jitter, and no shorter than retryAfter (at most a
// day).
func sourceBackoff(failures int, retryAfter time.Duration) time.Duration {
	b := min(sourceBackoffMin<<min(failures, 10), sourceBackoffMax)
	wait := b/2 + rand.N(b/2+1)
	return max(wait, min(retryAfter, 24*time.Hour))
}

// ReasonSourceBlocked begins the reason of a job held because its source refused the download
// until its account is set up or a quota renews (connectors.ErrBlocked).
const ReasonSourceBlocked = "source_blocked"

// sourceBlocked handles a source refusal about the account (402, a licence or access policy
// missing, a spent download quota): never a failure, since the recording is fine. The job is
// held with the source's own words, announced once per series (a recording.held event), and
// tried again after the wait the refusal names (a day by default) or at once when released.
func (p *Pipeline) sourceBlocked(ctx context.Context, j *Job, err error) error {
	now := p.now()
	wait := connectors.BlockedWait(err)
	last := err.Error()
	var be *connectors.BlockedError
	if errors.As(err, &be) {
		last = be.Err.Error() // the source's own words, without the upload's wrapping
	}
	if !strings.Contains(last, j.ItemID) {
		last = "item " + j.ItemID + ": " + last
	}
	reason := fmt.Sprintf("%s: source %s: %s (tried again every %s, or now with bridge jobs release %s)",
		ReasonSourceBlocked, j.Source, last, wait.Round(time.Minute), j.ID)
	j.NextAt = now.Add(wait)
	p.metrics().Upload(UploadHeld)
	var events []Event
	if !p.blockedAnnounced(ctx, j) {
		events = append(events, NewEvent(EventHeld, j, map[string]any{"reason": reason, "code": ReasonSourceBlocked}))
	}
	return p.hold(ctx, j, HoldSourceBlocked, reason, events...)
}

// blockedAnnounced reports whether the job's current series of tries ended in a hold for a
// blocked source already: going back through its history over its upload attempts, the first
// other change is such a hold.
func (p *Pipeline) blockedAnnounced(ctx context.Context, j *Job) bool {
	hist, err := p.Store.History(ctx, j.ID)
	if err != nil {
		return false
	}
	for i := len(hist) - 1; i >= 0; i-- {
		c := hist[i]
		switch {
		case c.To == StateHeld:
			return strings.HasPrefix(c.Reason, ReasonSourceBlocked+":")
		case c.To != StateUploading:
			return false
		}
	}
	return false
}
