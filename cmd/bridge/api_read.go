package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/transcript-bridge/bridge/api"
)

// apiReadCmds are the subcommands that print one answer: get, prompts, projects, workspace,
// members. They print JSON unless -o says otherwise: the service's answer unchanged (a list
// keeps its total: {"items": [...], "total": N}; prompts are {"prompts": [...]}).
func apiReadCmds(f *apiFlags) []*cobra.Command {
	return []*cobra.Command{
		apiReadCmd(f, "get ID", "Print the full record of a transcription", exactArgs(1, "ID"), "get transcription", func(a []string) string { return "/transcriptions/" + url.PathEscape(a[0]) },
			func(ctx context.Context, c *api.Client, a []string) (any, func(io.Writer), error) {
				t, err := c.Get(ctx, a[0])
				if err != nil {
					return nil, nil, err
				}
				return t, func(w io.Writer) { transcriptionTable(w, t) }, nil
			}),
		apiReadCmd(f, "prompts", "List the report templates visible to the key", cobra.NoArgs, "list prompts", fixedPath("/prompts"),
			func(ctx context.Context, c *api.Client, _ []string) (any, func(io.Writer), error) {
				ps, err := c.Prompts(ctx)
				return listOf(ps), func(w io.Writer) {
					fmt.Fprintln(w, "SLUG\tKIND\tSCOPE\tNAME")
					for _, p := range ps {
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Slug, p.Kind, orDash(p.Scope), p.Name)
					}
				}, err
			}),
		apiReadCmd(f, "projects", "List the projects visible to the key's creator", cobra.NoArgs, "list projects", fixedPath("/projects"),
			func(ctx context.Context, c *api.Client, _ []string) (any, func(io.Writer), error) {
				ps, err := c.Projects(ctx)
				return listOf(ps), func(w io.Writer) {
					fmt.Fprintln(w, "ID\tNAME\tCREATED")
					for _, p := range ps {
						fmt.Fprintf(w, "%s\t%s\t%s\n", p.ID, p.Name, tableTime(p.CreatedAt))
					}
				}, err
			}),
		apiReadCmd(f, "workspace", "Print the balance, limits and the key's rights", cobra.NoArgs, "get workspace", fixedPath("/workspace"),
			func(ctx context.Context, c *api.Client, _ []string) (any, func(io.Writer), error) {
				ws, err := c.Workspace(ctx)
				if err != nil {
					return nil, nil, err
				}
				return ws, func(w io.Writer) {
					expires := "never"
					if ws.Key.ExpiresAt != nil {
						expires = tableTime(*ws.Key.ExpiresAt)
					}
					l := ws.Limits
					printFields(w, "workspace", ws.Workspace.Name+" ("+ws.Workspace.ID+")",
						"available_minutes", strconv.FormatFloat(ws.Balance.AvailableMinutes, 'f', -1, 64),
						"max_file_size_mb", strconv.Itoa(l.MaxFileSizeMB), "concurrency", strconv.Itoa(l.Concurrency),
						"max_duration_hours", strconv.Itoa(l.MaxDurationHours), "reports_per_upload", strconv.Itoa(l.ReportsPerUpload),
						"reports_per_day", strconv.Itoa(l.ReportsPerDay), "key_scopes", strings.Join(ws.Key.Scopes, ", "),
						"key_expires_at", expires)
				}, nil
			}),
		apiReadCmd(f, "members", "List the active members and their identities", cobra.NoArgs, "list members", fixedPath("/workspace/members"),
			func(ctx context.Context, c *api.Client, _ []string) (any, func(io.Writer), error) {
				ms, err := c.Members(ctx)
				return listOf(ms), func(w io.Writer) {
					fmt.Fprintln(w, "ID\tEMAIL\tNAME\tROLE\tIDENTITIES")
					for _, m := range ms {
						ids := make([]string, 0, len(m.Identities))
						for _, id := range m.Identities {
							ids = append(ids, id.Provider+":"+id.ExternalID)
						}
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Email, orDash(m.Name), m.Role, strings.Join(ids, ","))
					}
				}, err
			}),
	}
}

// apiReadCmd is a bridge api command that fetches one answer and prints it: JSON by default
// (the api commands' contract), or -o yaml or table (the table that fetch returns). JSON and
// YAML are the service's answer unchanged, every field kept (a GET of path(args), named op in
// errors); fetch decodes it for the table.
func apiReadCmd(f *apiFlags, use, short string, args cobra.PositionalArgs, op string, path func(args []string) string,
	fetch func(ctx context.Context, c *api.Client, args []string) (any, func(io.Writer), error)) *cobra.Command {
	var format string
	cmd := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, args []string) error {
		c, err := f.client()
		if err != nil {
			return err
		}
		if format != formatTable {
			raw, err := c.GetJSON(cmd.Context(), op, path(args))
			if err != nil {
				return apiFailure(err)
			}
			return printOutput(cmd.OutOrStdout(), format, raw, nil)
		}
		v, table, err := fetch(cmd.Context(), c, args)
		if err != nil {
			return apiFailure(err)
		}
		return printOutput(cmd.OutOrStdout(), format, v, table)
	}}
	addOutputFlag(cmd, &format, formatJSON)
	return cmd
}

// fixedPath is the path of a read that takes no arguments.
func fixedPath(p string) func([]string) string { return func([]string) string { return p } }

// transcriptionTable prints a transcription one field a line, without its text and segments
// (-o json has them).
func transcriptionTable(w io.Writer, t *api.Transcription) {
	reports := make([]string, 0, len(t.PromptResults))
	for _, r := range t.PromptResults {
		reports = append(reports, orDash(r.Slug)+":"+r.Status)
	}
	project := ""
	if t.Project != nil {
		project = t.Project.Name + " (" + t.Project.ID + ")"
	}
	duration := ""
	if t.DurationSeconds != nil {
		duration = strconv.FormatFloat(*t.DurationSeconds, 'f', -1, 64) + "s"
	}
	author := t.Author.Email
	if t.Author.ID != "" {
		author += " (" + t.Author.ID + ")"
	}
	printFields(w, "id", t.ID, "title", deref(t.Title), "status", t.Status, "error_code", deref(t.ErrorCode),
		"language", deref(t.Language), "duration", duration, "media_type", deref(t.MediaType), "author", author,
		"project", project, "external_id", deref(t.ExternalID), "metadata", string(rawObject(t.Metadata)),
		"summary", deref(t.Summary), "reports", strings.Join(reports, ", "),
		"created_at", tableTime(t.CreatedAt), "updated_at", tableTime(t.UpdatedAt))
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// orDash is *s for a table cell: "-" for nil or empty.
func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

// listStatuses and listSorts are the values api list's --status and --sort take.
var (
	listStatuses = []string{api.StatusQueued, api.StatusProcessing, api.StatusCompleted, api.StatusFailed, api.StatusInsufficientBalance}
	listSorts    = []string{"created_at", "-created_at", "duration", "-duration"}
)

// printListPage prints one page of api list on out: the service's page unchanged (json,
// yaml), or its table.
func printListPage(ctx context.Context, out io.Writer, c *api.Client, p api.ListParams, format string) error {
	if format != formatTable {
		raw, err := c.ListJSON(ctx, p)
		if err != nil {
			return apiFailure(err)
		}
		return printOutput(out, format, raw, nil)
	}
	page, err := c.List(ctx, p)
	if err != nil {
		return apiFailure(err)
	}
	return printOutput(out, format, page, func(w io.Writer) {
		listItemHeader(w)
		for i := range page.Items {
			listItemRow(w, &page.Items[i])
		}
		fmt.Fprintf(w, "%d of %d (offset %d)\n", len(page.Items), page.Total, page.Offset)
	})
}

func newAPIListCmd(f *apiFlags) *cobra.Command {
	var p api.ListParams
	var metadata, from, to, format string
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List transcriptions (one page, or --all: every match, one JSON object a line)",
		Long: `List transcriptions: one page as the service returns it ({"items": [...], "total", "limit",
"offset"}), or with --all every match across pages as a stream: one JSON object a line (json),
one YAML document each (yaml), or one table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if p.Status != "" {
				if err := checkOneOf("--status", p.Status, listStatuses); err != nil {
					return err
				}
			}
			if p.Sort != "" {
				if err := checkOneOf("--sort", p.Sort, listSorts); err != nil {
					return err
				}
			}
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
			out := cmd.OutOrStdout()
			if !all {
				return printListPage(cmd.Context(), out, c, p, format)
			}
			return streamList(out, format, c.All(cmd.Context(), p))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Status, "status", "", "only this status: "+strings.Join(listStatuses, ", ")+" (default: the service's, completed)")
	fl.StringVar(&p.ExternalID, "external-id", "", "exact X-External-Id")
	fl.StringVar(&metadata, "metadata", "", "key=value: exact match on one metadata key")
	fl.StringVar(&p.ProjectID, "project", "", "project id")
	fl.StringVar(&p.Language, "language", "", "language code")
	fl.StringVar(&from, "from", "", "created on or after (YYYY-MM-DD)")
	fl.StringVar(&to, "to", "", "created on or before (YYYY-MM-DD)")
	fl.StringVar(&p.Sort, "sort", "", "order: "+strings.Join(listSorts, ", "))
	fl.IntVar(&p.Limit, "limit", 0, "page size, 1 to 100")
	fl.IntVar(&p.Offset, "offset", 0, "items to skip")
	fl.BoolVar(&all, "all", false, "every match across pages, streamed (json: one object a line)")
	addOutputFlag(cmd, &format, formatJSON)
	return cmd
}

// streamList prints every item of items as it arrives, in format: JSON lines, a YAML stream
// (one document each) or a table.
func streamList(out io.Writer, format string, items iter.Seq2[api.ListItem, error]) error {
	var enc func(api.ListItem) error
	var done func() error
	switch format {
	case formatJSON:
		line := newLineEncoder(out)
		enc, done = func(it api.ListItem) error { return line(it) }, func() error { return nil }
	case formatYAML:
		y := yaml.NewEncoder(out)
		y.SetIndent(2)
		enc, done = func(it api.ListItem) error { return encodeYAML(y, it) }, y.Close
	default:
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		listItemHeader(tw)
		enc, done = func(it api.ListItem) error { listItemRow(tw, &it); return nil }, tw.Flush
	}
	for it, err := range items {
		if err != nil {
			return errors.Join(apiFailure(err), done())
		}
		if err := enc(it); err != nil {
			return err
		}
	}
	return done()
}

// listItemHeader and listItemRow are the table of api list.
func listItemHeader(w io.Writer) {
	fmt.Fprintln(w, "ID\tSTATUS\tCREATED\tDURATION\tTITLE\tEXTERNAL ID")
}

func listItemRow(w io.Writer, it *api.ListItem) {
	duration := "-"
	if it.DurationSeconds != nil {
		duration = strconv.FormatFloat(*it.DurationSeconds, 'f', 0, 64) + "s"
	}
	status := it.Status
	if status == "" {
		status = "-"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, status, tableTime(it.CreatedAt), duration, oneLine(orDash(it.Title)), orDash(it.ExternalID))
}

func newAPIExportCmd(f *apiFlags) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a transcription as md, txt or json (to -o FILE, or stdout)",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOneOf("--format", format, exportFormats); err != nil {
				return err
			}
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
			if err := checkOneOf("--format", format, exportFormats); err != nil {
				return err
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

// exportFormats are the values api export and export-bulk's --format take.
var exportFormats = []string{"md", "txt", "json"}

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
	notice(cmd.ErrOrStderr(), fmt.Sprintf("wrote %s (%d bytes, %s)", path, n, d.Filename), "path", path, "bytes", n)
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}
