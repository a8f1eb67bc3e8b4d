package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
)

func newAPIUploadCmd(f *apiFlags) *cobra.Command {
	var p api.UploadParams
	var metadata, reports string
	var diarize, wait bool
	var poll time.Duration
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload a recording (streamed, retried with one Idempotency-Key); --wait prints the final record",
		Args:  exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if metadata != "" {
				if !json.Valid([]byte(metadata)) {
					return usageError("--metadata is not JSON: %s", metadata)
				}
				p.Metadata = json.RawMessage(metadata)
			}
			if cmd.Flags().Changed("diarize") {
				p.Diarize = &diarize
			}
			if reports != "" {
				p.Reports = strings.Split(reports, ",")
			}
			if isTerminal(cmd.ErrOrStderr()) {
				p.Progress = progressPrinter(cmd.ErrOrStderr())
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			res, err := c.UploadFile(cmd.Context(), args[0], p)
			if p.Progress != nil {
				fmt.Fprintln(cmd.ErrOrStderr())
			}
			if err != nil {
				return apiFailure(err)
			}
			if !wait {
				return printJSON(cmd.OutOrStdout(), res)
			}
			t, err := c.Wait(cmd.Context(), res.UUID, api.WaitOptions{Reports: p.Reports, PollMin: poll, PollMax: poll})
			if err != nil {
				return apiFailure(err)
			}
			return printJSON(cmd.OutOrStdout(), t)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.ExternalID, "external-id", "", "X-External-Id: your own id, up to 128 printable ASCII characters")
	fl.StringVar(&metadata, "metadata", "", `X-Metadata: a JSON object, e.g. '{"deal":"D-1"}'`)
	fl.StringVar(&p.Author, "author", "", "X-Author: email:<e-mail>, user:<uuid> or external:<provider>:<id>")
	fl.StringVar(&p.Language, "language", "", "auto or a language code")
	fl.StringVar(&p.ProjectID, "project", "", "project id")
	fl.BoolVar(&diarize, "diarize", true, "separate speakers (--diarize=false to turn off)")
	fl.IntVar(&p.SpeakersCount, "speakers", 0, "expected number of speakers, 1 to 20")
	fl.BoolVar(&p.AIMetadata, "ai-metadata", false, "generate title, summary, topics and speaker names")
	fl.StringVar(&reports, "reports", "", "report template slugs, comma-separated, at most 3")
	fl.StringVar(&p.IdempotencyKey, "idempotency-key", "", "key reused by every attempt (default: a new UUID, printed in the answer)")
	fl.BoolVar(&wait, "wait", false, "wait until the transcript and its reports are done, then print the full record")
	fl.DurationVar(&poll, "poll", 0, "with --wait: polling interval (default 5 to 10 s with jitter, as the reference advises)")
	return cmd
}

// apiWriteCmds are assign, delete, reports and identities.
func apiWriteCmds(f *apiFlags) []*cobra.Command {
	var clear bool
	assign := &cobra.Command{
		Use:   "assign ID AUTHOR | assign ID --clear",
		Short: "Give a transcription to a member (email:<e-mail> or user:<uuid>); --clear returns it to the key's creator",
		Args:  cobra.RangeArgs(1, 2),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if clear == (len(args) == 2) {
				return usageError("give either AUTHOR or --clear")
			}
			return nil
		},
		RunE: f.run(func(ctx context.Context, c *api.Client, args []string) (any, error) {
			author := ""
			if !clear {
				author = args[1]
			}
			return c.AssignJSON(ctx, args[0], author) // the record as the service sent it
		}),
	}
	assign.Flags().BoolVar(&clear, "clear", false, "return ownership to the key's creator")
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a transcription for all members (irreversible)",
		Args:  exactArgs(1, "ID"),
		RunE: f.run(func(ctx context.Context, c *api.Client, args []string) (any, error) {
			return map[string]any{"id": args[0], "deleted": true}, c.Delete(ctx, args[0])
		}),
	}
	reports := &cobra.Command{
		Use:   "reports ID SLUG...",
		Short: "Request AI reports (at most 3 slugs) for a transcription",
		Args:  cobra.RangeArgs(2, 4),
		RunE: f.run(func(ctx context.Context, c *api.Client, args []string) (any, error) {
			refs, err := c.RequestReports(ctx, args[0], args[1:]...)
			return map[string]any{"reports": refs}, err
		}),
	}
	identities := &cobra.Command{Use: "identities", Short: "Bind or unbind external identities of members"}
	identities.AddCommand(&cobra.Command{
		Use:   "put MEMBER_ID PROVIDER EXTERNAL_ID",
		Short: "Bind an external identity to a member",
		Args:  exactArgs(3, "MEMBER_ID PROVIDER EXTERNAL_ID"),
		RunE: f.run(func(ctx context.Context, c *api.Client, args []string) (any, error) {
			created, err := c.PutIdentity(ctx, args[0], api.Identity{Provider: args[1], ExternalID: args[2]})
			return map[string]any{"member_id": args[0], "provider": strings.ToLower(args[1]), "external_id": args[2], "created": created}, err
		}),
	}, &cobra.Command{
		Use:   "delete MEMBER_ID PROVIDER EXTERNAL_ID",
		Short: "Unbind an external identity",
		Args:  exactArgs(3, "MEMBER_ID PROVIDER EXTERNAL_ID"),
		RunE: f.run(func(ctx context.Context, c *api.Client, args []string) (any, error) {
			return map[string]any{"member_id": args[0], "provider": strings.ToLower(args[1]), "external_id": args[2], "deleted": true},
				c.DeleteIdentity(ctx, args[0], args[1], args[2])
		}),
	})
	return []*cobra.Command{assign, del, reports, identities}
}

// newLineEncoder writes one compact JSON object a line.
func newLineEncoder(w io.Writer) func(any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode
}
