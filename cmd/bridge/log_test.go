package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// Secrets the logs must never show.
const (
	testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	testBearer        = "zoomAccessTok3n.s3cr3tPart"
	testDownloadToken = "dl-eyJhbGciOiJIUzUxMiJ9.eyJhdWQiOiJ6b29tIn0.c2lnbmF0dXJlU2VjcmV0"
	testCRMToken      = "crmHeaderTok3n"
)

// TestLoggerRedacts: whatever shape a secret is logged in (message, string, nested groups,
// an error, a []string, a struct or a map with slog.Any, raw JSON, bytes, a With attribute), neither
// the text nor the JSON handler writes it, and the JSON handler still writes JSON.
func TestLoggerRedacts(t *testing.T) {
	key := "mk_live_Abc123secretKEY"
	type creds struct {
		User   string
		Header string
		Nested struct{ Tokens []string }
	}
	var c creds
	c.User, c.Header, c.Nested.Tokens = "ops", "Authorization: Bearer "+testBearer, []string{testWebhookSecret}
	tests := []struct {
		name   string
		log    func(*slog.Logger)
		secret string
	}{
		{"message", func(l *slog.Logger) { l.Info("using key " + key) }, key},
		{"string", func(l *slog.Logger) { l.Warn("x", "key", key) }, key},
		{"nested groups", func(l *slog.Logger) {
			l.Info("x", slog.Group("a", slog.Group("b", "secret", testWebhookSecret)))
		}, testWebhookSecret},
		{"with and group", func(l *slog.Logger) { l.With("auth", "Bearer "+testBearer).WithGroup("g").Info("x", "k", key) }, testBearer},
		{"error", func(l *slog.Logger) {
			l.Error("x", "err", fmt.Errorf("list: %w", errors.New("401: Authorization: Bearer "+testBearer)))
		}, testBearer},
		{"error in a group", func(l *slog.Logger) { l.Error("x", slog.Group("g", "err", errors.New("key "+key))) }, key},
		{"[]string", func(l *slog.Logger) { l.Info("x", "secrets", []string{"a", testWebhookSecret}) }, testWebhookSecret},
		{"struct", func(l *slog.Logger) { l.Info("x", slog.Any("creds", c)) }, testBearer},
		{"struct pointer, slice", func(l *slog.Logger) { l.Info("x", "creds", &c) }, testWebhookSecret},
		{"map", func(l *slog.Logger) {
			l.Info("x", "m", map[string]any{"k": []any{"url?access_token=" + testDownloadToken}})
		}, testDownloadToken},
		{"escaped JSON in a struct", func(l *slog.Logger) {
			l.Info("x", "body", struct{ Body string }{`{"download_token":"` + testDownloadToken + `"}`})
		}, testDownloadToken},
		{"raw JSON", func(l *slog.Logger) { l.Info("x", "raw", json.RawMessage(`{"client_secret":"`+testCRMToken+`"}`)) }, testCRMToken},
		{"bytes", func(l *slog.Logger) { l.Info("x", "b", []byte("key="+key)) }, key},
		{"a bare JWT", func(l *slog.Logger) { l.Info("x", "tok", strings.TrimPrefix(testDownloadToken, "dl-")) }, "c2lnbmF0dXJlU2VjcmV0"},
	}
	for _, tc := range tests {
		for _, format := range []string{"text", "json"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				tc.log(buildLogger(&buf, slog.LevelDebug, format == "json"))
				out := buf.String()
				if strings.Contains(out, tc.secret) || !strings.Contains(out, "[redacted]") {
					t.Errorf("log line shows %q or no redaction marker:\n%s", tc.secret, out)
				}
				if format == "json" && !json.Valid(buf.Bytes()) {
					t.Errorf("not JSON:\n%s", out)
				}
			})
		}
	}
}

// TestLoggerKeepsShape: redaction changes nothing else: a []string stays a JSON array, a struct
// an object, levels and plain values are written as the handlers write them.
func TestLoggerKeepsShape(t *testing.T) {
	var buf bytes.Buffer
	buildLogger(&buf, slog.LevelInfo, true).Warn("hello", "list", []string{"a", "Bearer " + testBearer},
		"n", 3, "s", struct{ A, B string }{"x", "y"}, "nil", nil, "d", time.Second)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	want := map[string]any{"level": "WARN", "msg": "hello", "list": []any{"a", "Bearer [redacted]"}, "n": 3.0,
		"s": map[string]any{"A": "x", "B": "y"}, "nil": nil, "d": 1e9}
	for k, v := range want {
		if fmt.Sprint(line[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %#v, want %#v", k, line[k], v)
		}
	}
	buf.Reset()
	buildLogger(&buf, slog.LevelInfo, false).Info("hello", "list", []string{"a", "b"}, "s", struct{ A string }{"x"}, "err", errors.New("boom"))
	if got := buf.String(); !strings.Contains(got, `level=INFO msg=hello list="[a b]" s={A:x} error=boom`) {
		t.Errorf("text line = %s", got)
	}
	buf.Reset()
	buildLogger(&buf, slog.LevelWarn, false).Info("quiet")
	if buf.Len() > 0 {
		t.Errorf("an INFO line at level warn: %s", buf.String())
	}
}

// TestLogFlags: --log-level and --log-format (or BRIDGE_LOG_LEVEL and BRIDGE_LOG_FORMAT) apply to
// every subcommand; a bad value is a usage error (exit 2) naming the allowed values, and a flag
// wins over the variable.
func TestLogFlags(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		code      int
		msg       string
		level     slog.Level
		json      bool
		skipLevel bool
	}{
		{name: "defaults", args: nil, level: slog.LevelInfo},
		{name: "flags", args: []string{"--log-level", "debug", "--log-format", "json"}, level: slog.LevelDebug, json: true},
		{name: "any case", args: []string{"--log-level=WARN", "--log-format=Text"}, level: slog.LevelWarn},
		{name: "env", env: map[string]string{logLevelEnv: "error", logFormatEnv: "json"}, level: slog.LevelError, json: true},
		{name: "flag over env", env: map[string]string{logLevelEnv: "nonsense"}, args: []string{"--log-level", "warn"}, level: slog.LevelWarn},
		{name: "bad level", args: []string{"--log-level", "verbose"}, code: exitUsage, msg: `--log-level "verbose": want one of debug, info, warn, error`},
		{name: "bad format", args: []string{"--log-format", "xml"}, code: exitUsage, msg: `--log-format "xml": want one of text, json`},
		{name: "bad env", env: map[string]string{logLevelEnv: "loud"}, code: exitUsage, msg: `BRIDGE_LOG_LEVEL "loud": want one of debug, info, warn, error`},
		{name: "bad env format", env: map[string]string{logFormatEnv: "yaml"}, code: exitUsage, msg: `BRIDGE_LOG_FORMAT "yaml": want one of text, json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(logLevelEnv, tc.env[logLevelEnv])
			t.Setenv(logFormatEnv, tc.env[logFormatEnv])
			// The flags are the root's: any subcommand takes them, before or after its name.
			for _, args := range [][]string{append(append([]string{}, tc.args...), "version"), append([]string{"version"}, tc.args...)} {
				var out, errb bytes.Buffer
				root := newRootCmd(&out, &errb)
				root.SetArgs(args)
				cmd, err := root.ExecuteC()
				if code := exitCode(err); code != tc.code || tc.msg != "" && !strings.Contains(fmt.Sprint(err), tc.msg) {
					t.Fatalf("bridge %v = exit %d (%v), want %d naming %q", args, code, err, tc.code, tc.msg)
				}
				if tc.code != 0 {
					continue
				}
				o, ok := cmd.ErrOrStderr().(*logOutput)
				if !ok || o.level != tc.level || o.json != tc.json {
					t.Errorf("bridge %v: log settings %+v, want level %v json %v", args, o, tc.level, tc.json)
				}
			}
		})
	}
}

// TestRunLogsNoSecrets runs the real `bridge run --once` at --log-level debug in both formats
// with an mk_live_ API key, a whsec_ webhook secret and a bearer header on the endpoint, a Zoom
// source whose recording's download_url carries a download token, and a second Zoom source
// whose API answers with an error quoting a bearer token: no secret reaches the logs, failures
// log at WARN or ERROR, and --log-level warn leaves out the INFO lines.
func TestRunLogsNoSecrets(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	fake := zoomtest.Start(t)
	fake.AddUser("zu-host-1", "owner@acme.test", "active")
	m4a, err := os.ReadFile("../../sandbox/testdata/media/speech.m4a")
	if err != nil {
		t.Fatal(err)
	}
	m := fake.AddMeeting("zu-host-1", "meeting-uuid-1==", "Weekly", time.Now().Add(-time.Hour), map[string][]byte{"M4A": m4a})
	fake.Edit(func() { m.File("M4A").DownloadURL += "?access_token=" + testDownloadToken })
	// A Zoom API that refuses every call, quoting the bearer token it was sent.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"code":124,"message":"Invalid access token in Authorization: Bearer %s"}`, testBearer)
	}))
	t.Cleanup(refusing.Close)

	for _, tc := range []struct {
		level, format string
	}{{"debug", "text"}, {"debug", "json"}, {"warn", "json"}} {
		t.Run(tc.level+"/"+tc.format, func(t *testing.T) {
			var hits atomic.Int32
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if hits.Add(1) == 1 {
					http.Error(w, "busy", http.StatusServiceUnavailable) // one retry, logged at WARN
				}
			}))
			defer receiver.Close()
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "zoom.secret"), []byte(zoomtest.ClientSecret), 0o600)
			config := filepath.Join(dir, "bridge.yaml")
			zoomSource := func(name, apiURL string) string {
				return fmt.Sprintf(`
  - {name: %s, type: zoom, account_id: %s, client_id: %s, client_secret_file: %q, api_url: %q, oauth_url: %q,
     file_types: [M4A], mapping: {provider: zoom, rules: [email], otherwise: key_owner}}`,
					name, zoomtest.AccountID, zoomtest.ClientID, filepath.Join(dir, "zoom.secret"), apiURL, fake.URL+"/oauth/token")
			}
			os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
webhooks:
  - {name: crm, url: %q, secret: %q, allow_private: true, retry_schedule: [1ms],
     headers: {Authorization: "Bearer %s"}}
sources:%s%s
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), receiver.URL, testWebhookSecret, testCRMToken,
				zoomSource("zoom", fake.URL+"/v2"), zoomSource("refusing", refusing.URL+"/v2")), 0o644)

			var out, errb bytes.Buffer
			code := Run(context.Background(), []string{"run", "--once", "--config", config, "--log-level", tc.level, "--log-format", tc.format}, &out, &errb)
			logs := errb.String()
			if code != exitOK || !strings.Contains(out.String(), "done 1") {
				t.Fatalf("bridge run --once = exit %d, %q; want 0 and one job done:\n%s", code, out.String(), tail(logs, 30))
			}
			if hits.Load() < 2 {
				t.Errorf("the receiver got %d requests, want the refused one and its retry", hits.Load())
			}
			for _, secret := range []string{sandboxtest.OwnerKey, testWebhookSecret, testBearer, testDownloadToken,
				strings.TrimPrefix(testDownloadToken, "dl-"), testCRMToken} {
				if strings.Contains(logs, secret) {
					t.Errorf("the logs show the secret %q:\n%s", secret, logs)
				}
			}
			lines := parseLogLines(t, logs, tc.format)
			levelOf := func(msg, key, value string) string {
				for _, l := range lines {
					if l["msg"] == msg && (key == "" || l[key] == value) {
						return l["level"]
					}
				}
				return ""
			}
			if got := levelOf("source cannot be read", "source", "refusing"); got != "ERROR" {
				t.Errorf("the failing source's scan logged at %q, want ERROR:\n%s", got, logs)
			}
			if !strings.Contains(logs, "Bearer [redacted]") {
				t.Errorf("the refusal quoting a bearer token is not in the logs, redacted:\n%s", logs)
			}
			if got := levelOf("delivery", "outcome", "pending"); got != "WARN" {
				t.Errorf("the refused delivery (will retry) logged at %q, want WARN:\n%s", got, logs)
			}
			infos := 0
			for _, l := range lines {
				if l["level"] == "INFO" {
					infos++
				}
			}
			if (tc.level == "warn") != (infos == 0) {
				t.Errorf("at --log-level %s, %d INFO lines:\n%s", tc.level, infos, logs)
			}
		})
	}
}

// parseLogLines parses log output of format text or json into one map per line (string values;
// keys of groups are dotted in text, top-level only in JSON), failing on a line that is not a
// log line of that format.
func parseLogLines(t *testing.T, logs, format string) []map[string]string {
	t.Helper()
	var out []map[string]string
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		fields := map[string]string{}
		if format == "json" {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not a JSON log line: %s", line)
			}
			for k, v := range m {
				if s, ok := v.(string); ok {
					fields[k] = s
				} else {
					fields[k] = fmt.Sprint(v)
				}
			}
		} else {
			if !strings.HasPrefix(line, "time=") {
				t.Fatalf("not a text log line: %s", line)
			}
			for _, kv := range splitText(line) {
				k, v, _ := strings.Cut(kv, "=")
				fields[k] = v
			}
		}
		out = append(out, fields)
	}
	return out
}

// splitText splits a text log line into key=value pairs, unquoting quoted values.
func splitText(line string) []string {
	var out []string
	for line != "" {
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			break
		}
		key, rest := line[:eq], line[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
				end++
			}
			q := rest[:min(end+1, len(rest))]
			if uq, err := strconv.Unquote(q); err == nil {
				val = uq
			} else {
				val = q
			}
			rest = rest[min(end+1, len(rest)):]
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			val, rest = rest[:sp], rest[sp:]
		}
		out = append(out, key+"="+val)
		line = strings.TrimPrefix(rest, " ")
	}
	return out
}
