package main

// bridge doctor's checks of what lies outside the bridge: each source and each webhook endpoint.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// sourceTimeout bounds one source's check.
const sourceTimeout = time.Minute

// doctorSources builds each source and its mapping as bridge run does (checkSources, which
// stops at the first failure), then checks its credentials and access.
func doctorSources(ctx context.Context, cfg *Config, r *doctorReport) {
	for i, s := range cfg.Sources {
		name := "source " + s.Name
		if path := defaultInboxMissing(cfg, s); path != "" {
			r.warn(name, path+" does not exist yet: bridge run creates it (no configuration file)", "drop recordings there once bridge run has started")
			continue
		}
		src, err := connectors.New(s.Type, s.Name, s.Options)
		if err != nil {
			r.fail(name, cfg.sourceError(i, err).Error(), "fix the option named (bridge run refuses to start until then)")
			continue
		}
		if _, err := newMapper(s, "check", &mapping.Members{}); err != nil {
			r.fail(name, fmt.Sprintf("sources[%d].%v", i, err), "fix the mapping setting named")
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, sourceTimeout)
		lines, retry, err := probeSource(sctx, src)
		cancel()
		var fine, warnings []string
		for _, l := range lines {
			if problem, fix, ok := connectors.ParseWarning(l); ok {
				warnings = append(warnings, problem, fix)
			} else {
				fine = append(fine, l)
			}
		}
		if err != nil {
			fix := fmt.Sprintf("grant or correct what is named; bridge %s %s tries this source alone", retry, s.Name)
			problem := err.Error()
			if p, f, ok := connectors.SetupFix(err); ok {
				problem, fix = p, f+"; bridge "+retry+" "+s.Name+" tries this source alone"
			}
			r.fail(name, problem, fix)
		} else {
			r.ok(name, s.Type+": "+strings.Join(fine, "; "))
		}
		for i := 0; i < len(warnings); i += 2 {
			r.warn(name, warnings[i], warnings[i+1])
		}
	}
}

// defaultInboxMissing returns the built-in default's folder when it does not exist yet and
// bridge run would create it (makeDefaultInbox: no configuration file was read); else "".
func defaultInboxMissing(cfg *Config, s SourceConfig) string {
	path, _ := s.Options["path"].(string)
	if cfg.origins == nil || !strings.HasPrefix(cfg.origins.fallback, "built-in") || s.Type != "localdir" || path != defaultInbox {
		return ""
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return path
}

// probeSource checks src without taking anything: its own check (connectors.Checker, as bridge
// sources check runs it) when it has one, else a listing (as bridge sources list). lines are
// what was found, some of them warnings (connectors.Warning); retry is the command that does
// the same for one source.
func probeSource(ctx context.Context, src connectors.Source) (lines []string, retry string, err error) {
	if c, ok := src.(connectors.Checker); ok {
		lines, err := c.Check(ctx)
		return lines, "sources check", err
	}
	recs, _, err := src.List(ctx, "")
	if err != nil {
		return nil, "sources list", err
	}
	return []string{fmt.Sprintf("lists %d recording(s)", len(recs))}, "sources list", nil
}

// doctorWebhooks reads every endpoint's settings and secrets (buildEndpoints, as bridge run),
// then sends each a signed ping and says whether it is disabled in the store.
func doctorWebhooks(ctx context.Context, cfg *Config, storeCurrent bool, r *doctorReport) {
	if len(cfg.Webhooks) == 0 {
		return
	}
	eps, err := buildEndpoints(cfg)
	if err != nil {
		r.fail("webhooks", err.Error(), "fix the setting named (bridge run refuses to start until then)")
		return
	}
	disabled := disabledEndpoints(ctx, cfg, storeCurrent)
	for _, e := range eps {
		name := "webhook " + e.Name
		if reason, off := disabled[e.Name]; off {
			r.warn(name, "disabled: "+reason, "once the receiver is fixed: bridge endpoints enable "+e.Name)
		}
		res, id, err := pingEndpoint(ctx, e)
		switch {
		case err != nil:
			r.fail(name, strings.TrimPrefix(err.Error(), "webhook "+e.Name+": "), unreachableFix(e))
		case res.OK():
			r.ok(name, fmt.Sprintf("%s answered %d in %d ms to a signed ping (%s)", relay.RedactURL(e.URL), res.Status, res.Latency.Milliseconds(), id))
		default:
			r.fail(name, fmt.Sprintf("the receiver at %s answered %d %s to a signed ping (%s)", relay.RedactURL(e.URL), res.Status, answerExcerpt(res.Body), id), webhookFix(res.Status))
		}
	}
}

// disabledEndpoints returns the endpoints the relay disabled (after a 410), by name, when the
// store is current; nil otherwise or when it cannot be read (the store's check said why).
func disabledEndpoints(ctx context.Context, cfg *Config, storeCurrent bool) map[string]string {
	if !storeCurrent {
		return nil
	}
	store, err := openExistingStore(ctx, cfg) // current: opening migrates nothing
	if err != nil {
		return nil
	}
	defer store.Close()
	disabled, err := store.DisabledEndpoints(ctx)
	if err != nil {
		return nil
	}
	return disabled
}

// pingEndpoint sends e one signed ping event ({"type": "ping", "data": {"endpoint": NAME}},
// signed with the endpoint's secrets like every delivery), past its filter and transform. It
// returns the answer and the ping's webhook-id.
func pingEndpoint(ctx context.Context, e *relay.Endpoint) (relay.Result, string, error) {
	id, err := bridge.NewWebhookID()
	if err != nil {
		return relay.Result{}, "", fmt.Errorf("webhook %s: %w", e.Name, err)
	}
	now := time.Now()
	m := relay.Message{ID: id, Type: "ping", Time: now, Data: map[string]any{"endpoint": e.Name}}
	res, err := relay.Send(ctx, relay.NewHTTPClient(e.AllowPrivate, e.Timeout), e.Unfiltered(), m, now)
	return res, id, err
}

// answerExcerpt is the start of a receiver's answer, quoted as the receiver's words (a body
// "ok" after a 500 is what the receiver said, not the doctor's verdict): `with body "text"`
// on one line, or "with an empty body".
func answerExcerpt(body string) string {
	body = strings.Join(strings.Fields(body), " ")
	if body == "" {
		return "with an empty body"
	}
	if len(body) > 120 {
		body = body[:120] + "…"
	}
	return fmt.Sprintf("with body %q", body)
}

// unreachableFix says what to do about an endpoint that could not be reached: allow_private is
// suggested only when it is not set already.
func unreachableFix(e *relay.Endpoint) string {
	if e.AllowPrivate {
		return "check the URL, DNS and the firewall, and that the receiver runs (allow_private is already true)"
	}
	return "check the URL, DNS and the firewall; a loopback or private address needs allow_private: true"
}

// webhookFix says what to do about an endpoint that answered a ping with status.
func webhookFix(status int) string {
	switch {
	case status == 401 || status == 403:
		return "the receiver refused the signature: give it this webhook's secret and have it verify webhook-signature (bridge webhooks verify shows how)"
	case status == 404 || status == 405:
		return "check the URL's path: the receiver takes POSTs elsewhere"
	case status == 410:
		return "the receiver is gone, and the relay disables an endpoint that answers 410: fix the URL or remove the webhook"
	case status >= 500:
		return "the receiver failed: see its logs (deliveries are retried meanwhile)"
	}
	return "make the receiver answer 2xx to a POST of a ping event"
}
