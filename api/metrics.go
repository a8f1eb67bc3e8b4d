package api

import (
	"context"
	"strconv"
	"time"
)

// Metrics hears what the client does, for the bridge's /metrics (cmd wires a Prometheus
// implementation; the client imports none). A nil Metrics in Config records nothing.
type Metrics interface {
	// APIRequest counts one HTTP attempt of method at route, a template such as
	// "/transcriptions/{id}" (never a raw id), answered with status ("200", "429"; "error" when
	// no answer came).
	APIRequest(route, method, status string)
	// LimiterWait observes how long a request waited for the client-side limiter of class
	// ("data", "delete") before it was sent.
	LimiterWait(class string, d time.Duration)
	// UploadBytes counts the bytes of a recording one upload attempt sent.
	UploadBytes(n int64)
}

// Routes of the API as metrics name them: templates, so that ids never become labels.
const (
	routeTranscriptions      = "/transcriptions"
	routeTranscription       = "/transcriptions/{id}"
	routeTranscriptionExport = "/transcriptions/{id}/export"
	routeBulkExport          = "/transcriptions/export"
	routeReports             = "/transcriptions/{id}/reports"
	routeWorkspace           = "/workspace"
	routeMembers             = "/workspace/members"
	routeIdentities          = "/workspace/members/{id}/identities"
	routeIdentity            = "/workspace/members/{id}/identities/{provider}/{external_id}"
	routeProjects            = "/projects"
	routePrompts             = "/prompts"
)

// LastAnswer returns when the API last answered a request of this client (any status below
// 500: a refusal is an answer too; a 5xx or no answer at all is not); zero before the first
// answer. Readiness checks read it instead of asking the API themselves.
func (c *Client) LastAnswer() time.Time {
	ns := c.lastAnswer.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// answered records one attempt of method at route that got status (0: no answer) for
// LastAnswer and the metrics. An attempt cut short by the caller's context is not counted.
func (c *Client) answered(ctx context.Context, route, method string, status int) {
	if status > 0 && status < 500 {
		c.lastAnswer.Store(time.Now().UnixNano())
	}
	if c.cfg.Metrics == nil || status == 0 && ctx.Err() != nil {
		return
	}
	label := "error"
	if status > 0 {
		label = strconv.Itoa(status)
	}
	c.cfg.Metrics.APIRequest(route, method, label)
}

// waited records a wait of d for the limiter of class.
func (c *Client) waited(class string, d time.Duration) {
	if c.cfg.Metrics != nil {
		c.cfg.Metrics.LimiterWait(class, d)
	}
}

// uploadSent records the bytes one upload attempt sent.
func (c *Client) uploadSent(n int64) {
	if c.cfg.Metrics != nil && n > 0 {
		c.cfg.Metrics.UploadBytes(n)
	}
}
