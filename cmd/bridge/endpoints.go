package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// buildEndpoints checks every configured webhook (URL, secrets, events, jq programs) and reads
// its secrets. The error names where the setting at fault was written (as loadConfig's do),
// then the entry and the key: "webhooks[0].secret_file: ...".
func buildEndpoints(cfg *Config) ([]*relay.Endpoint, error) {
	var out []*relay.Endpoint
	names := map[string]bool{}
	for i, w := range cfg.Webhooks {
		fail := func(err error) error {
			err = fmt.Errorf("webhooks[%d].%w", i, err)
			if cfg.origins != nil {
				err = cfg.origins.attribute(err)
			}
			return usageError("%v", err)
		}
		if names[w.Name] {
			return nil, fail(fmt.Errorf("name: %q is used twice", w.Name))
		}
		names[w.Name] = true
		err := w.Validate()
		if err == nil {
			err = w.ReadSecrets()
		}
		if err != nil {
			return nil, fail(err)
		}
		e, err := relay.NewEndpoint(w)
		if err != nil {
			return nil, usageError("webhooks[%d]: %v", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func newEndpointsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "endpoints", Short: "The configured webhook endpoints"}
	var cf configFlags
	var format string
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per endpoint: name, URL, events, payload, whether private addresses are allowed, state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, cfg, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			eps, err := buildEndpoints(cfg)
			if err != nil {
				return err
			}
			health, err := bridge.EndpointsHealth(cmd.Context(), store)
			if err != nil {
				return err
			}
			views := make([]endpointView, 0, len(eps))
			for _, e := range eps {
				views = append(views, newEndpointView(e, health))
			}
			return printOutput(cmd.OutOrStdout(), format, listOf(views), func(w io.Writer) {
				fmt.Fprintln(w, "NAME\tURL\tEVENTS\tPAYLOAD\tALLOW_PRIVATE\tSTATE")
				for _, e := range views {
					events := "all"
					if !e.AllEvents {
						events = strings.Join(e.Events, ",")
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%v\t%s\n", e.Name, e.URL, events, e.Payload, e.AllowPrivate, e.label)
				}
			})
		},
	}
	cf.register(list)
	addOutputFlag(list, &format, formatTable)
	cmd.AddCommand(list, newEndpointsEnableCmd())
	return cmd
}

// endpointView is a configured endpoint as endpoints list prints it in JSON and YAML. Its
// secrets and header values are never shown (headers may carry credentials), nor its URL's
// query and user info.
type endpointView struct {
	// Name identifies the endpoint.
	Name string `json:"name"`
	// URL is where the POSTs go, without query or credentials.
	URL string `json:"url"`
	// Events are the event types the endpoint receives (every type when all_events is true).
	Events []string `json:"events"`
	// AllEvents is true when the configuration names no types: the endpoint receives them all.
	AllEvents bool `json:"all_events"`
	// Payload is full or thin.
	Payload string `json:"payload"`
	// AllowPrivate is true when loopback, private and link-local targets are allowed.
	AllowPrivate bool `json:"allow_private"`
	// TimeoutSeconds bounds one attempt.
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// HeaderNames are the names of the configured extra headers (their values are not shown).
	HeaderNames []string `json:"header_names,omitempty"`
	// Filtered is true when a jq filter decides which messages are sent.
	Filtered bool `json:"filtered"`
	// Transformed is true when a jq transform shapes the body's data.
	Transformed bool `json:"transformed"`
	// State is enabled, failing (on, with dead letters or retries) or disabled (after a 410
	// Gone or paused, until endpoints enable): bridge.EndpointHealth's State.
	State string `json:"state"`
	// DisabledReason says why a disabled endpoint is off.
	DisabledReason string `json:"disabled_reason,omitempty"`
	// Dead and Retrying count its dead letters and its deliveries retried after a failure.
	Dead     int `json:"dead"`
	Retrying int `json:"retrying"`
	// label is the state as the table and the status page write it ("disabled: answered 410
	// Gone").
	label string
}

// newEndpointView is e as printed; health is bridge.EndpointsHealth's (e missing from it is
// enabled with nothing failing).
func newEndpointView(e *relay.Endpoint, health map[string]*bridge.EndpointHealth) endpointView {
	var h bridge.EndpointHealth
	if health[e.Name] != nil {
		h = *health[e.Name]
	}
	v := endpointView{Name: e.Name, URL: relay.RedactURL(e.URL), Events: e.Events, Payload: e.Payload, AllowPrivate: e.AllowPrivate,
		TimeoutSeconds: e.Timeout.Seconds(), Filtered: e.Filter != "", Transformed: e.Transform != "", State: h.State(),
		DisabledReason: h.Disabled, Dead: h.Dead, Retrying: h.Retrying, label: h.Label()}
	if len(v.Events) == 0 {
		v.Events, v.AllEvents = slices.Clone(relay.EventTypes), true
	}
	for h := range e.Headers {
		v.HeaderNames = append(v.HeaderNames, h)
	}
	slices.Sort(v.HeaderNames)
	return v
}

// newWebhooksTestCmd sends a signed ping to one configured endpoint.
func newWebhooksTestCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Send a signed ping to a configured endpoint and print its answer (exit 1 unless 2xx)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			eps, err := buildEndpoints(cfg)
			if err != nil {
				return err
			}
			for _, e := range eps {
				if e.Name != args[0] {
					continue
				}
				res, id, err := pingEndpoint(cmd.Context(), e)
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				out := map[string]any{"endpoint": e.Name, "webhook_id": id, "status": res.Status, "latency_ms": res.Latency.Milliseconds(), "body": res.Body}
				if err := printJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
				if !res.OK() {
					return &exitError{code: exitFailed, err: fmt.Errorf("webhook %s answered %d", e.Name, res.Status)}
				}
				return nil
			}
			return usageError("no webhook named %q in the configuration", args[0])
		},
	}
	cf.register(cmd)
	return cmd
}
