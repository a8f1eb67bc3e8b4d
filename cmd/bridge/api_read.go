package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
)

// apiReadCmds are the subcommands that print one answer: get, prompts, projects, workspace,
// members.
func apiReadCmds(f *apiFlags) []*cobra.Command {
	simple := func(use, short string, args cobra.PositionalArgs, fn func(ctx context.Context, c *api.Client, args []string) (any, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: f.run(fn)}
	}
	return []*cobra.Command{
		simple("get ID", "Print the full record of a transcription", exactArgs(1, "ID"),
			func(ctx context.Context, c *api.Client, a []string) (any, error) { return c.Get(ctx, a[0]) }),
		simple("prompts", "List the report templates visible to the key", cobra.NoArgs,
			func(ctx context.Context, c *api.Client, _ []string) (any, error) { return c.Prompts(ctx) }),
		simple("projects", "List the projects visible to the key's creator", cobra.NoArgs,
			func(ctx context.Context, c *api.Client, _ []string) (any, error) { return c.Projects(ctx) }),
		simple("workspace", "Print the balance, limits and the key's rights", cobra.NoArgs,
			func(ctx context.Context, c *api.Client, _ []string) (any, error) { return c.Workspace(ctx) }),
		simple("members", "List the active members and their identities", cobra.NoArgs,
			func(ctx context.Context, c *api.Client, _ []string) (any, error) { return c.Members(ctx) }),
	}
}

func newAPIListCmd(f *apiFlags) *cobra.Command {
	var p api.ListParams
	var metadata, from, to string
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List transcriptions (one page, or --all: every match, one JSON object a line)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if metadata != "" {
				k, v, ok := strings.Cut(metadata, "=")
				if !ok || k == "" {
					return usageError("--metadata %q: want key=value", metadata)
				}
				p.MetadataKey, p.MetadataValue = k, v
			}
			for _, d := range []struct {
				flag, val string
				dst       *time.Time
			}{{"--from", from, &p.DateFrom}, {"--to", to, &p.DateTo}} {
				if d.val == "" {
					continue
				}
				t, err := time.Parse(time.DateOnly, d.val)
				if err != nil {
					return usageError("%s %q: want a date YYYY-MM-DD", d.flag, d.val)
				}
				*d.dst = t
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			if !all {
				page, err := c.List(cmd.Context(), p)
				if err != nil {
					return apiFailure(err)
				}
				return printJSON(cmd.OutOrStdout(), page)
			}
			enc := newLineEncoder(cmd.OutOrStdout())
			for it, err := range c.All(cmd.Context(), p) {
				if err != nil {
					return apiFailure(err)
				}
				if err := enc(it); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Status, "status", "", "queued, processing, completed (the service's default), failed, insufficient_balance")
	fl.StringVar(&p.ExternalID, "external-id", "", "exact X-External-Id")
	fl.StringVar(&metadata, "metadata", "", "key=value: exact match on one metadata key")
	fl.StringVar(&p.ProjectID, "project", "", "project id")
	fl.StringVar(&p.Language, "language", "", "language code")
	fl.StringVar(&from, "from", "", "created on or after (YYYY-MM-DD)")
	fl.StringVar(&to, "to", "", "created on or before (YYYY-MM-DD)")
	fl.StringVar(&p.Sort, "sort", "", "created_at, -created_at, duration or -duration")
	fl.IntVar(&p.Limit, "limit", 0, "page size, 1 to 100")
	fl.IntVar(&p.Offset, "offset", 0, "items to skip")
	fl.BoolVar(&all, "all", false, "every match across pages, one JSON object a line")
	return cmd
}

func newAPIExportCmd(f *apiFlags) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a transcription as md, txt or json (to -o FILE, or stdout)",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			d, err := c.Export(cmd.Context(), args[0], format)
			if err != nil {
				return apiFailure(err)
			}
			return save(cmd, d, out)
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "md, txt or json")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: stdout)")
	return cmd
}

func newAPIExportBulkCmd(f *apiFlags) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export-bulk ID... -o FILE.zip",
		Short: "Export up to 100 transcriptions as one ZIP",
		Args:  cobra.RangeArgs(1, 100),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError("-o FILE.zip is required")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			d, err := c.ExportBulk(cmd.Context(), args, format)
			if err != nil {
				return apiFailure(err)
			}
			return save(cmd, d, out)
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "md, txt or json")
	cmd.Flags().StringVarP(&out, "output", "o", "", "ZIP file to write")
	return cmd
}

// save streams a download to path (atomically, through a temporary file) or to stdout.
func save(cmd *cobra.Command, d *api.Download, path string) error {
	defer d.Body.Close()
	if path == "" || path == "-" {
		_, err := io.Copy(cmd.OutOrStdout(), d.Body)
		return err
	}
	tmp, err := os.CreateTemp(dirOf(path), ".bridge-export-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, d.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes, %s)\n", path, n, d.Filename)
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}
