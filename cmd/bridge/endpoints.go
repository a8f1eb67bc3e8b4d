package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// buildEndpoints checks every configured webhook (URL, secret, events, jq programs); the error
// names the entry.
func buildEndpoints(cfg *Config) ([]*relay.Endpoint, error) {
	var out []*relay.Endpoint
	names := map[string]bool{}
	for i, w := range cfg.Webhooks {
		at := fmt.Sprintf("webhooks[%d]", i)
		if names[w.Name] {
			return nil, usageError("%s.name: %q is used twice", at, w.Name)
		}
		names[w.Name] = true
		text := w.Secret
		if w.SecretFile != "" {
			b, err := os.ReadFile(w.SecretFile)
			if err != nil {
				return nil, usageError("%s.secret_file: %v", at, err)
			}
			text = string(b)
		}
		var secrets []webhook.Secret
		for _, f := range strings.Fields(strings.ReplaceAll(text, ",", " ")) {
			s, err := webhook.ParseSecret(f)
			if err != nil {
				return nil, usageError("%s.secret_file: %v", at, err)
			}
			secrets = append(secrets, s)
		}
		e, err := relay.NewEndpoint(relay.EndpointConfig{Name: w.Name, URL: w.URL, Secrets: secrets, Events: w.Events,
			Filter: w.Filter, Transform: w.Transform, Headers: w.Headers, Timeout: w.Timeout, Payload: w.Payload, AllowPrivate: w.AllowPrivate, RetrySchedule: w.RetrySchedule})
		if err != nil {
			return nil, usageError("%s: %v", at, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func newEndpointsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "endpoints", Short: "The configured webhook endpoints"}
	var cf configFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per endpoint: name, URL, events, payload, whether private addresses are allowed",
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
			disabled, err := store.DisabledEndpoints(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tURL\tEVENTS\tPAYLOAD\tALLOW_PRIVATE\tSTATE")
			for _, e := range eps {
				events := "all"
				if len(e.Events) > 0 {
					events = strings.Join(e.Events, ",")
				}
				state := "enabled"
				if reason, off := disabled[e.Name]; off {
					state = "disabled: " + reason
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", e.Name, relay.RedactURL(e.URL), events, e.Payload, e.AllowPrivate, state)
			}
			return tw.Flush()
		},
	}
	cf.register(list)
	cmd.AddCommand(list, newEndpointsEnableCmd())
	return cmd
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
				now := time.Now()
				m := relay.Message{ID: "msg_ping_" + fmt.Sprint(now.UnixNano()), Type: "ping", Time: now, Data: map[string]any{"endpoint": e.Name}}
				res, err := relay.Send(cmd.Context(), relay.NewHTTPClient(e.AllowPrivate, e.Timeout), e.Unfiltered(), m, now)
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				out := map[string]any{"endpoint": e.Name, "webhook_id": m.ID, "status": res.Status, "latency_ms": res.Latency.Milliseconds(), "body": res.Body}
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
