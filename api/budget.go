package api

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// backgroundKey marks a context whose requests are background work (Background).
type backgroundKey struct{}

// Background marks ctx's requests as background work, such as the tracker's polls: they wait
// for the client's limiter like any other request, but one that finds the key's data budget
// spent is not contention (see Contended), so background work can yield to the rest without
// mistaking its own requests for a busy key.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func isBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// contendedHold is the part of the rate window for which one request that found the budget
// spent keeps the key contended (Contended): a quarter, 15 s of a minute. Uploads that take
// longer than the limiter's pace leave a token now and then, and a backfill's uploads can
// pause for a step; the hold bridges those gaps, and contention ends this long after the last
// request that waited.
const contendedHold = 4

// Contended reports whether requests other than background work queue for the key's data
// budget: one that was not Background (an upload, a report request, a balance check) found
// the client's limiter without a token within the last quarter of the rate window (15 s of a
// minute). Never true without a limiter (DataPerMinute < 0).
func (c *Client) Contended() bool {
	at := c.spentAt.Load()
	return c.data != nil && at != 0 && c.clock().Sub(time.Unix(0, at)) < c.cfg.RateWindow/contendedHold
}

// DataBudget returns the data requests the key may make per window and the window
// (Config.DataPerMinute and RateWindow); 0 requests without a limiter.
func (c *Client) DataBudget() (int, time.Duration) {
	if c.data == nil {
		return 0, c.cfg.RateWindow
	}
	return c.cfg.DataPerMinute, c.cfg.RateWindow
}

// noteBudget records, before a data request waits for limiter l, when one that is not
// background work found the budget spent (Contended).
func (c *Client) noteBudget(ctx context.Context, l *rate.Limiter) {
	now := c.clock()
	if !isBackground(ctx) && l.TokensAt(now) < 1 {
		c.spentAt.Store(now.UnixNano())
	}
}

func (c *Client) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
