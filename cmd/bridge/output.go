package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// Output formats of the list and show commands (-o, --output).
const (
	// formatTable is for people: aligned columns, or one field a line for a single object.
	formatTable = "table"
	// formatJSON is one indented JSON document.
	formatJSON = "json"
	// formatYAML is the same document as JSON, with the same field names, in YAML.
	formatYAML = "yaml"
)

// outputFormats are the values -o takes, in the order help and errors name them.
var outputFormats = []string{formatTable, formatJSON, formatYAML}

// outputHelp is the paragraph the list and show commands add to their help: what -o prints.
const outputHelp = `Output (-o, --output): table (for people), json or yaml. JSON is one document: for a list,
an object whose "items" array holds one object per row; for a single thing, the object itself.
Field names are snake_case and stable; times are RFC 3339 in UTC, and a time that is not set is
left out. YAML carries the same fields as JSON.`

// addOutputFlag gives cmd the flag -o/--output, kept in format (table, json or yaml; def when
// not given), and checks its value before the command runs: another value is a usage error
// (exit 2) naming the allowed ones.
func addOutputFlag(cmd *cobra.Command, format *string, def string) {
	cmd.Flags().StringVarP(format, "output", "o", def, "output format: "+strings.Join(outputFormats, ", "))
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := checkOneOf("-o", *format, outputFormats); err != nil {
			return err
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	if cmd.Long == "" {
		cmd.Long = cmd.Short + "."
	}
	cmd.Long += "\n\n" + outputHelp
}

// checkOneOf is the usage error (exit 2) for a flag whose value is not among allowed, naming
// them; nil when it is.
func checkOneOf(flag, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return usageError("%s %q: not one of %s", flag, value, strings.Join(allowed, ", "))
}

// checkKnown is the usage error (exit 2) for a filter value that names nothing: not among
// configured, and found (asked only then) reports nothing stored under it either. A name only
// the store knows (a source or endpoint since removed from the configuration) is accepted.
func checkKnown(flag, value string, configured []string, found func() (bool, error)) error {
	if value == "" || slices.Contains(configured, value) {
		return nil
	}
	ok, err := found()
	if err != nil || ok {
		return err
	}
	if len(configured) == 0 {
		return usageError("%s %q: nothing configured or stored has this name", flag, value)
	}
	return usageError("%s %q: not one of %s (configured), and nothing stored has this name", flag, value, strings.Join(configured, ", "))
}

// printOutput writes v to w in format: json as one indented document, yaml as the same
// document in YAML (through its JSON encoding, so the field names are the json tags), table by
// calling table, whose tab-separated cells are aligned in columns.
func printOutput(w io.Writer, format string, v any, table func(w io.Writer)) error {
	switch format {
	case formatJSON:
		return printJSON(w, v)
	case formatYAML:
		return printYAML(w, v)
	case formatTable:
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		table(tw)
		return tw.Flush()
	}
	return checkOneOf("-o", format, outputFormats)
}

// printYAML writes v as one YAML document with the fields, names and order of its JSON
// encoding.
func printYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := encodeYAML(enc, v); err != nil {
		return err
	}
	return enc.Close()
}

// encodeYAML adds v to a YAML stream as one document, converted from its JSON encoding.
func encodeYAML(enc *yaml.Encoder, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil { // JSON is YAML: this keeps the field order
		return fmt.Errorf("yaml: %w", err)
	}
	blockStyle(&doc)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	return nil
}

// blockStyle turns the flow style and quotes that parsing JSON leaves on n into YAML's
// ordinary block style. Strings that a YAML 1.1 reader would take for booleans stay quoted.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && oldBool(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// oldBool reports whether s is a boolean in YAML 1.1 (yes, no, on, off, y, n) though a
// string in YAML 1.2.
func oldBool(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off":
		return true
	}
	return false
}

// listView is the JSON and YAML form of a list: {"items": [...]}, never null.
type listView[T any] struct {
	// Items holds one object per row, in the order of the table.
	Items []T `json:"items"`
}

// listOf wraps items as a listView; no items is an empty array.
func listOf[T any](items []T) listView[T] {
	if items == nil {
		items = []T{}
	}
	return listView[T]{Items: items}
}

// utc is t in UTC, for the views: zero stays zero (and is left out with omitzero).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// tableTime is t for a table cell: RFC 3339 in UTC, or "-" when not set.
func tableTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// printFields writes one "label:<TAB>value" line per pair of kv (label, value, label, value,
// …), leaving out empty values: the table form of a single object. Values are kept whole,
// on one line.
func printFields(w io.Writer, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fmt.Fprintf(w, "%s:\t%s\n", kv[i], strings.ReplaceAll(kv[i+1], "\n", " "))
		}
	}
}

// rawObject is a stored JSON value as a view field: nil when empty or not valid JSON, so it
// is left out rather than breaking the document.
func rawObject(b []byte) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !json.Valid(b) || string(b) == "null" {
		return nil
	}
	return json.RawMessage(b)
}
