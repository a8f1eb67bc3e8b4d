package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
)

// Log settings: the root's persistent --log-level and --log-format flags, else the
// BRIDGE_LOG_LEVEL and BRIDGE_LOG_FORMAT variables, else info and text.
const (
	logLevelFlag  = "log-level"
	logFormatFlag = "log-format"
	logLevelEnv   = "BRIDGE_LOG_LEVEL"
	logFormatEnv  = "BRIDGE_LOG_FORMAT"
)

// errorKey is the one attribute name of an error in every log line.
const errorKey = "error"

// logLevels are the accepted --log-level values.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// logOutput is the root command's stderr. It writes through to the stream given to Run and
// carries the log settings of this invocation, so newLogger(cmd.ErrOrStderr()) in any
// subcommand builds the logger the flags asked for, with no state shared between invocations.
type logOutput struct {
	io.Writer
	level      slog.Level
	json       bool
	levelFlag  string
	formatFlag string
}

// Unwrap returns the stream written to (isTerminal looks at it).
func (o *logOutput) Unwrap() io.Writer { return o.Writer }

// addLogFlags adds the persistent --log-level and --log-format flags to root and routes root's
// stderr through a logOutput that holds them once parsed. A bad value, from a flag or from the
// environment, is a usage error naming the allowed values.
func addLogFlags(root *cobra.Command) {
	out := &logOutput{Writer: root.ErrOrStderr(), level: slog.LevelInfo}
	root.SetErr(out)
	pf := root.PersistentFlags()
	pf.StringVar(&out.levelFlag, logLevelFlag, "info", "log level: debug, info, warn or error (env "+logLevelEnv+")")
	pf.StringVar(&out.formatFlag, logFormatFlag, "text", "log format: text or json (env "+logFormatEnv+")")
	next := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := out.configure(cmd); err != nil {
			return err
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}

// configure reads the log settings of cmd's invocation: a flag given wins over the variable.
func (o *logOutput) configure(cmd *cobra.Command) error {
	level, from := logSetting(cmd, logLevelFlag, logLevelEnv, o.levelFlag)
	l, ok := logLevels[strings.ToLower(level)]
	if !ok {
		return usageError("%s %q: want one of debug, info, warn, error", from, level)
	}
	format, from := logSetting(cmd, logFormatFlag, logFormatEnv, o.formatFlag)
	switch strings.ToLower(format) {
	case "text", "json":
	default:
		return usageError("%s %q: want one of text, json", from, format)
	}
	o.level, o.json = l, strings.EqualFold(format, "json")
	// What logs through slog's default (the AWS SDK's logger, see internal/s3client, and the
	// standard log package) writes in the same format and level.
	slog.SetDefault(buildLogger(o.Writer, o.level, o.json))
	return nil
}

// notice writes a line for people on w (a command's stderr): as is, or under --log-format json
// as one JSON log line at INFO with attrs, so that every line there is JSON.
func notice(w io.Writer, msg string, attrs ...any) {
	if o, ok := w.(*logOutput); ok && o.json {
		buildLogger(o.Writer, slog.LevelInfo, true).Info(msg, attrs...)
		return
	}
	fmt.Fprintln(w, msg)
}

// printError writes the error that ends a command on w (the root's stderr): one line
// "bridge: …" and, for a usage error, a pointer to the command's help; under --log-format json
// the same as one JSON log line at ERROR with the attributes error and hint.
func printError(w io.Writer, err error, hint string) {
	if o, ok := w.(*logOutput); ok && o.json {
		attrs := []any{errorKey, err}
		if hint != "" {
			attrs = append(attrs, "hint", hint)
		}
		buildLogger(o.Writer, slog.LevelError, true).Error("bridge: "+err.Error(), attrs...)
		return
	}
	fmt.Fprintf(w, "bridge: %v\n", api.Redact(err.Error()))
	if hint != "" {
		fmt.Fprintln(w, hint)
	}
}

// logSetting returns the value of a log setting and where it came from: the flag when given,
// else the environment variable when set, else the flag's default.
func logSetting(cmd *cobra.Command, flag, env, value string) (string, string) {
	if !cmd.Flags().Changed(flag) {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v, env
		}
	}
	return strings.TrimSpace(value), "--" + flag
}

// newLogger returns the logger of a command that writes to w (its ErrOrStderr): the level and
// format of --log-level and --log-format when w is the root's stderr, else info and text. Every
// value it writes is redacted (see redactAttr).
func newLogger(w io.Writer) *slog.Logger {
	level, json := slog.LevelInfo, false
	if o, ok := w.(*logOutput); ok {
		level, json = o.level, o.json
	}
	return buildLogger(w, level, json)
}

// buildLogger returns a text or JSON logger on w at level, redacting secrets.
func buildLogger(w io.Writer, level slog.Leveler, jsonFormat bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr(jsonFormat)}
	if jsonFormat {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// redactAttr returns the ReplaceAttr of a handler that removes secrets (api.Redact: API keys,
// webhook secrets, bearer and download tokens) from every attribute, the message included,
// at any depth of groups: strings are redacted, errors become their redacted text, and any
// other value (slices, maps, structs) is redacted in the form the handler would write it, so
// the JSON handler still writes JSON.
func redactAttr(jsonFormat bool) func([]string, slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
			return a
		}
		if a.Key == "err" { // one name for an error in every line, whoever logged it
			a.Key = errorKey
		}
		switch a.Value.Kind() {
		case slog.KindString:
			a.Value = slog.StringValue(api.Redact(a.Value.String()))
		case slog.KindAny:
			a.Value = redactValue(a.Value.Any(), jsonFormat)
		}
		return a
	}
}

// redactValue returns v redacted: as a string, or for the JSON handler as redacted JSON.
func redactValue(v any, jsonFormat bool) slog.Value {
	switch x := v.(type) {
	case nil:
		return slog.AnyValue(nil)
	case error:
		return slog.StringValue(api.Redact(x.Error()))
	case json.RawMessage:
		if jsonFormat {
			if raw, ok := redactJSON(x); ok {
				return slog.AnyValue(raw)
			}
		}
		return slog.StringValue(api.Redact(string(x)))
	case []byte:
		return slog.StringValue(api.Redact(string(x)))
	}
	if jsonFormat {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as slog's JSON handler
		if err := enc.Encode(v); err == nil {
			if raw, ok := redactJSON(bytes.TrimSpace(buf.Bytes())); ok {
				return slog.AnyValue(raw)
			}
		}
	} else if tm, ok := v.(encoding.TextMarshaler); ok { // as slog's text handler
		if b, err := tm.MarshalText(); err == nil {
			return slog.StringValue(api.Redact(string(b)))
		}
	}
	return slog.StringValue(api.Redact(fmt.Sprintf("%+v", v)))
}

// redactJSON redacts every string (and object key) of the JSON document b, each in its
// decoded form so escaping cannot hide a secret, and the values of secret fields (api.SecretField);
// b is returned as is when nothing changed.
func redactJSON(b []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, false
	}
	clean, changed := redactTree(tree)
	if !changed {
		return json.RawMessage(b), true
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(clean); err != nil {
		return nil, false
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes())), true
}

// redactTree redacts the strings of a decoded JSON value and reports whether any changed.
func redactTree(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		r := api.Redact(x)
		return r, r != x
	case []any:
		changed := false
		for i := range x {
			var c bool
			x[i], c = redactTree(x[i])
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		out, changed := make(map[string]any, len(x)), false
		for k, e := range x {
			rk := api.Redact(k)
			re, c := redactTree(e)
			if s, ok := e.(string); ok && api.SecretField(k) && s != "" {
				re, c = "[redacted]", true
			}
			out[rk] = re
			changed = changed || c || rk != k
		}
		return out, changed
	}
	return v, false
}
