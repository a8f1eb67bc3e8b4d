package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
)

// apiFlags are the connection flags every `bridge api` subcommand shares.
type apiFlags struct {
	baseURL string
	key     string
	keyFile string
}

// client builds the API client from flags, then BRIDGE_API_BASE_URL / BRIDGE_API_KEY /
// BRIDGE_API_KEY_FILE. A missing setting is a usage error naming the flag and the variable.
func (f *apiFlags) client() (*api.Client, error) {
	base := firstNonEmpty(f.baseURL, os.Getenv("BRIDGE_API_BASE_URL"))
	key, err := readAPIKey(firstNonEmpty(f.key, os.Getenv("BRIDGE_API_KEY")), firstNonEmpty(f.keyFile, os.Getenv("BRIDGE_API_KEY_FILE")), "--key-file")
	if err != nil {
		return nil, err
	}
	if base == "" {
		return nil, usageError("no API base URL: pass --base-url or set BRIDGE_API_BASE_URL")
	}
	if key == "" {
		return nil, usageError("no API key: pass --key-file, set BRIDGE_API_KEY_FILE or BRIDGE_API_KEY, or pass --key")
	}
	c, err := api.New(api.Config{BaseURL: base, Key: key})
	if err != nil {
		return nil, usageError("%v", err)
	}
	return c, nil
}

// readAPIKey is the API key: key when set, else the content of keyFile without surrounding
// white space ("" when neither is set). A file that cannot be read is a usage error naming
// setting (api.key_file, --key-file).
func readAPIKey(key, keyFile, setting string) (string, error) {
	if key != "" || keyFile == "" {
		return key, nil
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return "", usageError("%s: %v", setting, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func newAPICmd() *cobra.Command {
	f := &apiFlags{}
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Call the transcription API: upload, list, export, assign, delete, members and identities",
		Long: `A thin command line over the API client. Base URL and key come from --base-url and
--key-file (or --key), else BRIDGE_API_BASE_URL and BRIDGE_API_KEY_FILE / BRIDGE_API_KEY.
Answers are printed as JSON on stdout; a failure exits 1 with one line on stderr naming the
HTTP status and the upstream code.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.baseURL, "base-url", "", "API base URL, ending in /developer/v1 (env BRIDGE_API_BASE_URL)")
	pf.StringVar(&f.key, "key", "", "API key (prefer --key-file or BRIDGE_API_KEY: flags show in process lists)")
	pf.StringVar(&f.keyFile, "key-file", "", "file holding the API key (env BRIDGE_API_KEY_FILE)")
	cmd.AddCommand(newAPIUploadCmd(f), newAPIListCmd(f), newAPIExportCmd(f), newAPIExportBulkCmd(f))
	cmd.AddCommand(apiReadCmds(f)...)
	cmd.AddCommand(apiWriteCmds(f)...)
	return cmd
}

// run makes a RunE that builds the client, calls fn and prints its answer as JSON; a failure of
// fn exits 1 naming the status and code.
func (f *apiFlags) run(fn func(ctx context.Context, c *api.Client, args []string) (any, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := f.client()
		if err != nil {
			return err
		}
		v, err := fn(cmd.Context(), c, args)
		if err != nil {
			return apiFailure(err)
		}
		return printJSON(cmd.OutOrStdout(), v)
	}
}

// printJSON writes v indented, with a final newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// apiFailure keeps API failures at exit 1 and makes the message name status and code.
func apiFailure(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("api: %w", err)}
}

// exactArgs is cobra.ExactArgs with a usage error naming what is expected.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("want %s, got %d argument(s)", names, len(args))
		}
		return nil
	}
}
