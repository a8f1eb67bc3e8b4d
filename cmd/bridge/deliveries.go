package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
)

// openStore loads the configuration and opens its existing store, for the commands that read
// or act on what is stored: it never creates a database (see openExistingStore).
func openStore(cmd *cobra.Command, cf *configFlags) (database, *Config, error) {
	cfg, err := cf.load()
	if err != nil {
		return nil, nil, err
	}
	store, err := openExistingStore(cmd.Context(), cfg)
	if err != nil {
		return nil, nil, err
	}
	return store, cfg, nil
}

// openExistingStore opens the configured store only if its database exists: a read-only
// command run from the wrong directory says where it looked instead of creating an empty
// database there.
func openExistingStore(ctx context.Context, cfg *Config) (database, error) {
	if err := sqliteMissing(cfg); err != nil {
		return nil, err
	}
	return openStoreAt(ctx, cfg)
}

// openStoreAt opens the configured store, creating a SQLite database when it does not exist yet
// (for the commands that write: run, export run, sources backfill, identities apply).
func openStoreAt(ctx context.Context, cfg *Config) (database, error) {
	return openDatabase(ctx, cfg)
}

// newDeliveriesCmd is deliveries: list, show and replay webhook deliveries.
func newDeliveriesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "deliveries", Short: "Webhook deliveries: list, show attempts, replay"}
	var lf, sf, rf configFlags
	cmd.AddCommand(newDeliveriesListCmd(&lf), newDeliveriesShowCmd(&sf), newDeliveriesReplayCmd(&rf))
	return cmd
}

// newDeliveriesListCmd is deliveries list: one line per delivery, filtered by --endpoint and
// --status.
func newDeliveriesListCmd(cf *configFlags) *cobra.Command {
	var endpoint, status, listFormat string
	list := &cobra.Command{
		Use:   "list",
		Short: "One line per delivery, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" {
				if err := checkOneOf("--status", status, deliveryStatuses); err != nil {
					return err
				}
			}
			store, cfg, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			ds, err := store.Deliveries(cmd.Context(), bridge.DeliveryFilter{Endpoint: endpoint, Status: bridge.DeliveryStatus(status), Limit: 1000})
			if err != nil {
				return err
			}
			var endpoints []string
			for _, w := range cfg.Webhooks {
				endpoints = append(endpoints, w.Name)
			}
			if err := checkKnown("--endpoint", endpoint, endpoints, func() (bool, error) {
				if len(ds) > 0 {
					return true, nil
				}
				some, err := store.Deliveries(cmd.Context(), bridge.DeliveryFilter{Endpoint: endpoint, Limit: 1})
				return len(some) > 0, err
			}); err != nil {
				return err
			}
			views := make([]deliveryView, 0, len(ds))
			for i := range ds {
				views = append(views, newDeliveryView(&ds[i]))
			}
			return printOutput(cmd.OutOrStdout(), listFormat, listOf(views), func(w io.Writer) {
				fmt.Fprintln(w, "ID\tENDPOINT\tTYPE\tSTATUS\tATTEMPTS\tLAST\tNEXT")
				for _, d := range views {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", d.ID, d.Endpoint, d.Type, d.Status, d.Attempts, d.LastStatus, tableTime(d.NextAttemptAt))
				}
			})
		},
	}
	cf.register(list)
	list.Flags().StringVar(&endpoint, "endpoint", "", "only this endpoint (a configured one, or one the store has deliveries to)")
	list.Flags().StringVar(&status, "status", "", "only this status: "+strings.Join(deliveryStatuses, ", "))
	addOutputFlag(list, &listFormat, formatTable)
	return list
}

// newDeliveriesShowCmd is deliveries show: a delivery and its attempts.
func newDeliveriesShowCmd(cf *configFlags) *cobra.Command {
	var showFormat string
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a delivery and its attempts",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			d, attempts, err := store.Delivery(cmd.Context(), args[0])
			if errors.Is(err, bridge.ErrDeliveryNotFound) {
				return unknownID("delivery", args[0])
			}
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			v := newDeliveryDetailView(d, attempts)
			return printOutput(cmd.OutOrStdout(), showFormat, v, v.table)
		},
	}
	cf.register(show)
	addOutputFlag(show, &showFormat, formatTable)
	return show
}

// newDeliveriesReplayCmd is deliveries replay: deliveries named by id, or by endpoint and time
// range, sent again (relay.Replay).
func newDeliveriesReplayCmd(cf *configFlags) *cobra.Command {
	var rEndpoint, since, until string
	var dead, missed bool
	replay := &cobra.Command{
		Use:   "replay [ID...] [--endpoint E --since T --until T --dead --missed]",
		Short: "Send deliveries again (same webhook-id): by id, or by endpoint and time range",
		RunE: func(cmd *cobra.Command, args []string) error {
			f := bridge.DeliveryFilter{Endpoint: rEndpoint, Missed: missed}
			if dead {
				f.Status = bridge.DeliveryDead
			}
			for _, t := range []struct {
				flag, val string
				dst       *time.Time
			}{{"--since", since, &f.Since}, {"--until", until, &f.Until}} {
				if t.val == "" {
					continue
				}
				v, err := time.Parse(time.RFC3339, t.val)
				if err != nil {
					return usageError("%s %q: want an RFC 3339 time like 2026-11-22T00:00:00Z", t.flag, t.val)
				}
				*t.dst = v
			}
			if relay.CheckReplay(args, f) != nil {
				return usageError("name deliveries: IDs, or --endpoint/--since/--until/--dead")
			}
			store, cfg, err := openStore(cmd, cf)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := checkDeliveriesKnown(cmd.Context(), store, args); err != nil {
				return err
			}
			if err := checkKnown("--endpoint", rEndpoint, webhookNames(cfg), func() (bool, error) {
				some, err := store.Deliveries(cmd.Context(), bridge.DeliveryFilter{Endpoint: rEndpoint, Limit: 1})
				return len(some) > 0, err
			}); err != nil {
				return err
			}
			n, err := relay.Replay(cmd.Context(), store, args, f, time.Now())
			if err != nil {
				return err
			}
			noun := "deliveries"
			if n == 1 {
				noun = "delivery"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d %s will be sent again by the running bridge\n", n, noun)
			return nil
		},
	}
	cf.register(replay)
	replay.Flags().StringVar(&rEndpoint, "endpoint", "", "deliveries to this endpoint")
	replay.Flags().StringVar(&since, "since", "", "created at or after (RFC 3339)")
	replay.Flags().StringVar(&until, "until", "", "created before (RFC 3339)")
	replay.Flags().BoolVar(&dead, "dead", false, "only dead letters")
	replay.Flags().BoolVar(&missed, "missed", false, "only what the endpoint has not received (pending and dead), not what it got: after an outage")
	return replay
}

// deliveryStatuses are the statuses a delivery can have, for --status and its errors.
var deliveryStatuses = func() []string {
	out := make([]string, len(bridge.DeliveryStatuses))
	for i, s := range bridge.DeliveryStatuses {
		out[i] = string(s)
	}
	return out
}()

// deliveryView is a delivery as deliveries list and deliveries show print it in JSON and YAML.
type deliveryView struct {
	// ID identifies the delivery in deliveries show and replay.
	ID string `json:"id"`
	// Endpoint is the configured webhook endpoint it goes to.
	Endpoint string `json:"endpoint"`
	// Type is the event type (transcription.completed, …).
	Type string `json:"type"`
	// Status is pending, delivered or dead.
	Status string `json:"status"`
	// Attempts counts the attempts made.
	Attempts int `json:"attempts"`
	// LastStatus is the HTTP status of the last answer (left out before any answer).
	LastStatus int `json:"last_status,omitempty"`
	// LastError is the last attempt's failure, when it had one.
	LastError string `json:"last_error,omitempty"`
	// NextAttemptAt is when a pending delivery is tried next (left out unless pending).
	NextAttemptAt time.Time `json:"next_attempt_at,omitzero"`
	// WebhookID is the webhook-id header: the same on every attempt and replay.
	WebhookID string `json:"webhook_id"`
	// EventID is the event in the outbox.
	EventID int64 `json:"event_id"`
	// JobID is the job the event is about (empty for events of no job).
	JobID string `json:"job_id,omitempty"`
	// TranscriptionID is the transcription the event is about, when there is one.
	TranscriptionID string `json:"transcription_id,omitempty"`
	// EventAt is when the event happened.
	EventAt time.Time `json:"event_at,omitzero"`
	// CreatedAt is when the delivery was created.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// UpdatedAt is when the delivery last changed.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// newDeliveryView is d as printed; its error text goes through api.Redact.
func newDeliveryView(d *bridge.Delivery) deliveryView {
	v := deliveryView{ID: d.ID, Endpoint: d.Endpoint, Type: d.Type, Status: string(d.Status), Attempts: d.Attempts,
		LastStatus: d.LastStatus, LastError: api.Redact(d.LastError), WebhookID: d.WebhookID, EventID: d.EventID, JobID: d.JobID,
		TranscriptionID: d.TranscriptionID, EventAt: utc(d.EventAt), CreatedAt: utc(d.CreatedAt), UpdatedAt: utc(d.UpdatedAt)}
	if d.Status == bridge.DeliveryPending {
		v.NextAttemptAt = utc(d.NextAttemptAt)
	}
	return v
}

// deliveryDetailView is what deliveries show prints: the delivery, its event's data and every
// attempt.
type deliveryDetailView struct {
	deliveryView
	// Data is the event's data as stored (the body's "data" before the payload form and any
	// transform apply).
	Data json.RawMessage `json:"data,omitempty"`
	// History lists the attempts, oldest first.
	History []attemptView `json:"history"`
}

// newDeliveryDetailView is d with its attempts as printed; the event data and the attempts'
// text go through api.Redact.
func newDeliveryDetailView(d *bridge.Delivery, attempts []bridge.Attempt) deliveryDetailView {
	v := deliveryDetailView{deliveryView: newDeliveryView(d), Data: rawObject([]byte(api.Redact(string(d.Data)))),
		History: make([]attemptView, 0, len(attempts))}
	for _, a := range attempts {
		v.History = append(v.History, attemptView{At: utc(a.At), Status: a.Status, LatencyMS: a.Latency,
			Response: api.Redact(a.Response), Error: api.Redact(a.Error)})
	}
	return v
}

// attemptView is one attempt of a delivery.
type attemptView struct {
	// At is when the attempt started.
	At time.Time `json:"at,omitzero"`
	// Status is the HTTP status of the answer (0: no answer).
	Status int `json:"status"`
	// LatencyMS is how long the answer took, in milliseconds.
	LatencyMS float64 `json:"latency_ms"`
	// Response is the start of the answer's body (anything secret-looking redacted).
	Response string `json:"response,omitempty"`
	// Error is why the attempt failed, when it did.
	Error string `json:"error,omitempty"`
}

// table prints the delivery one field a line, then its attempts.
func (v deliveryDetailView) table(w io.Writer) {
	last := ""
	if v.LastStatus != 0 {
		last = strconv.Itoa(v.LastStatus)
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return tableTime(t)
	}
	printFields(w, "id", v.ID, "endpoint", v.Endpoint, "type", v.Type, "status", v.Status, "attempts", strconv.Itoa(v.Attempts),
		"last_status", last, "last_error", v.LastError, "next_attempt_at", at(v.NextAttemptAt), "webhook_id", v.WebhookID,
		"event_id", strconv.FormatInt(v.EventID, 10), "job_id", v.JobID, "transcription_id", v.TranscriptionID,
		"event_at", at(v.EventAt), "created_at", at(v.CreatedAt), "updated_at", at(v.UpdatedAt))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "AT\tSTATUS\tLATENCY\tRESPONSE\tERROR")
	for _, a := range v.History {
		fmt.Fprintf(w, "%s\t%d\t%.1fms\t%s\t%s\n", tableTime(a.At), a.Status, a.LatencyMS, oneLine(a.Response), oneLine(a.Error))
	}
}

// newEndpointsEnableCmd turns an endpoint disabled by a 410 back on.
func newEndpointsEnableCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "enable NAME",
		Short: "Turn on an endpoint disabled after answering 410; its pending deliveries resume",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, cfg, err := openStore(cmd, &cf)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := checkEndpointKnown(cmd.Context(), cfg, store, args[0]); err != nil {
				return err
			}
			if err := store.EnableEndpoint(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "endpoint %s enabled\n", args[0])
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
