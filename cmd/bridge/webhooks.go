package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

func newWebhooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "webhooks", Short: "Standard Webhooks signatures: verify a delivery, make a secret"}
	var secretFile, id, ts, sig, bodyFile string
	var headers []string
	var tolerance time.Duration
	var now int64
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Verify a received webhook's signature (exit 0 valid, 1 invalid)",
		Long: `Verify a webhook the way a receiver must: the webhook-timestamp within the tolerance of now
and one of the webhook-signature values matching HMAC-SHA256(secret, "id.timestamp.body"),
compared in constant time. The body is read from --body or stdin; the secret from --secret-file
or BRIDGE_WEBHOOK_SECRET (several, comma-separated, while a secret rotates).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			secrets, err := readSecrets(secretFile)
			if err != nil {
				return err
			}
			h := http.Header{}
			for _, line := range headers {
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					return usageError("--header %q: want 'name: value'", line)
				}
				h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			for k, v := range map[string]string{webhook.HeaderID: id, webhook.HeaderTimestamp: ts, webhook.HeaderSignature: sig} {
				if v != "" {
					h.Set(k, v)
				}
			}
			var body []byte
			if bodyFile == "" || bodyFile == "-" {
				body, err = io.ReadAll(cmd.InOrStdin())
			} else {
				body, err = os.ReadFile(bodyFile)
			}
			if err != nil {
				return usageError("--body: %v", err)
			}
			at := time.Now()
			if now != 0 {
				at = time.Unix(now, 0)
			}
			if err := webhook.Verify(h, body, at, tolerance, secrets...); err != nil {
				return &exitError{code: exitFailed, err: fmt.Errorf("invalid: %w", err)}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "valid")
			return nil
		},
	}
	fl := verify.Flags()
	fl.StringVar(&secretFile, "secret-file", "", "file holding the whsec_ secret(s), comma- or newline-separated (env BRIDGE_WEBHOOK_SECRET)")
	fl.StringArrayVar(&headers, "header", nil, "a received header, 'name: value' (repeatable)")
	fl.StringVar(&id, "id", "", "the webhook-id header")
	fl.StringVar(&ts, "timestamp", "", "the webhook-timestamp header")
	fl.StringVar(&sig, "signature", "", "the webhook-signature header")
	fl.StringVar(&bodyFile, "body", "", "file holding the raw body (default: stdin)")
	fl.DurationVar(&tolerance, "tolerance", webhook.DefaultTolerance, "how far the timestamp may be from now")
	fl.Int64Var(&now, "now", 0, "check against this Unix time instead of the clock (for replaying captured deliveries)")
	newSecret := &cobra.Command{
		Use:   "new-secret",
		Short: "Print a fresh whsec_ secret (32 random bytes) to give to one endpoint",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := webhook.NewSecret()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), s.Encode())
			return nil
		},
	}
	cmd.AddCommand(verify, newSecret, newWebhooksTestCmd())
	return cmd
}

// readSecrets reads whsec_ secrets from a file or BRIDGE_WEBHOOK_SECRET.
func readSecrets(file string) ([]webhook.Secret, error) {
	text := os.Getenv("BRIDGE_WEBHOOK_SECRET")
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, usageError("--secret-file: %v", err)
		}
		text = string(b)
	}
	out, err := webhook.ParseSecrets(text)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if len(out) == 0 {
		return nil, usageError("%v", errors.New("no secret: pass --secret-file or set BRIDGE_WEBHOOK_SECRET"))
	}
	return out, nil
}
