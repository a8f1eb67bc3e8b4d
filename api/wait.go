package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// WaitOptions tune Wait.
type WaitOptions struct {
	// Reports are the slugs whose reports must be terminal too; nil waits for every report the
	// record carries.
	Reports []string
	// PollMin and PollMax override the client's polling interval bounds.
	PollMin, PollMax time.Duration
}

// Wait polls transcription id, every PollMin to PollMax with jitter, until its status is
// terminal and the wanted reports are terminal, and returns the final record. It ends with the
// context's error (and the last status seen) when ctx ends first.
func (c *Client) Wait(ctx context.Context, id string, opts WaitOptions) (*Transcription, error) {
	lo, hi := opts.PollMin, opts.PollMax
	if lo == 0 {
		lo = c.cfg.PollMin
	}
	if hi == 0 {
		hi = c.cfg.PollMax
	}
	hi = max(hi, lo)
	for {
		t, err := c.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if Done(t, opts.Reports) {
			return t, nil
		}
		d := lo + time.Duration(rand.Int64N(int64(hi-lo)+1))
		if err := sleep(ctx, d); err != nil {
			return t, fmt.Errorf("wait for transcription %s (status %s): %w", id, t.Status, err)
		}
	}
}

// Done reports whether t is terminal with every wanted report terminal (all of its reports when
// wanted is nil). A transcription that ended without a transcript has nothing more to wait for.
func Done(t *Transcription, wanted []string) bool {
	if !Terminal(t.Status) {
		return false
	}
	if t.Status != StatusCompleted {
		return true
	}
	want := map[string]bool{}
	for _, s := range wanted {
		want[s] = true
	}
	seen := map[string]bool{}
	for _, r := range t.PromptResults {
		slug := ""
		if r.Slug != nil {
			slug = *r.Slug
		}
		if wanted != nil && !want[slug] {
			continue
		}
		seen[slug] = true
		if r.Status != StatusCompleted && r.Status != StatusFailed {
			return false
		}
	}
	for s := range want {
		if !seen[s] {
			return false // requested but not yet visible on the record
		}
	}
	return true
}
