package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// outputRow is a small view for the printer's tests.
type outputRow struct {
	// ID is a string.
	ID string `json:"id"`
	// N is a number.
	N int `json:"count"`
	// At is a time, left out when zero.
	At time.Time `json:"at,omitzero"`
	// Word is a string that YAML might read as something else.
	Word string `json:"word,omitempty"`
}

func TestPrintOutput(t *testing.T) {
	at := time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)
	rows := listOf([]outputRow{{ID: "a", N: 1, At: at, Word: "yes"}, {ID: "bb", N: 22, Word: "123"}})
	table := func(w io.Writer) {
		fmt.Fprintln(w, "ID\tN")
		for _, r := range rows.Items {
			fmt.Fprintf(w, "%s\t%d\n", r.ID, r.N)
		}
	}
	tests := []struct {
		format string
		value  any
		want   string
	}{
		{formatJSON, rows, `{
  "items": [
    {
      "id": "a",
      "count": 1,
      "at": "2026-11-22T08:30:00Z",
      "word": "yes"
    },
    {
      "id": "bb",
      "count": 22,
      "word": "123"
    }
  ]
}
`},
		{formatYAML, rows, `items:
  - id: a
    count: 1
    at: "2026-11-22T08:30:00Z"
    word: "yes"
  - id: bb
    count: 22
    word: "123"
`},
		{formatTable, rows, "ID  N\na   1\nbb  22\n"},
		{formatJSON, listOf[outputRow](nil), "{\n  \"items\": []\n}\n"},
		{formatYAML, listOf[outputRow](nil), "items: []\n"},
		{formatYAML, outputRow{ID: "x: y", Word: "multi\nline"}, "id: 'x: y'\ncount: 0\nword: |-\n  multi\n  line\n"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		err := printOutput(&b, tc.format, tc.value, table)
		if err != nil || b.String() != tc.want {
			t.Errorf("printOutput(%q, %+v) = %q, %v, want %q", tc.format, tc.value, b.String(), err, tc.want)
		}
	}
}

// TestPrintYAMLSameFields: the YAML of a view reads back as exactly its JSON.
func TestPrintYAMLSameFields(t *testing.T) {
	v := jobDetailView{jobView: jobView{ID: "j1", Source: "inbox", State: "done", Owner: &ownerView{Provider: "zoom", ID: "u1"},
		Metadata: json.RawMessage(`{"deal":"D-1","n":2}`), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)},
		History: []changeView{{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), To: "discovered"}}}
	var j, y bytes.Buffer
	if err := printOutput(&j, formatJSON, v, nil); err != nil {
		t.Fatal(err)
	}
	if err := printOutput(&y, formatYAML, v, nil); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(fromJSON), normalize(fromYAML)) {
		t.Errorf("YAML reads back as %v, want the JSON %v\n%s", fromYAML, fromJSON, y.String())
	}
	if strings.Contains(j.String(), "0001-01-01") || strings.Contains(j.String(), `"fields"`) {
		t.Errorf("JSON has a zero time or the source's fields:\n%s", j.String())
	}
}

// normalize makes decoded JSON and YAML comparable: numbers as float64.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case int:
		return float64(x)
	}
	return v
}

// TestViewsRedact: free text that reached the store (errors, a receiver's answer, event data)
// is printed without anything secret-looking.
func TestViewsRedact(t *testing.T) {
	const tok = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
	d := &bridge.Delivery{ID: "d1", Status: bridge.DeliveryDead, LastError: "receiver said: Authorization: Bearer abc.def",
		Data: json.RawMessage(`{"source":{"link":"https://zoom.test/rec?x=1"},"download_token":"` + tok + `"}`)}
	tests := []struct {
		name string
		view any
	}{
		{"job", newJobView(&bridge.Job{ID: "j1", State: bridge.StateFailed, Reason: "download refused: access_token=s3cr3t"})},
		{"delivery", newDeliveryDetailView(d, []bridge.Attempt{{Status: 401, Response: `{"echo":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`}})},
		{"export run", newExportRunView(bridge.ExportRun{Export: "nightly", Error: "s3: mk_live_abcdef rejected"}, time.Now())},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := printOutput(&b, formatJSON, tc.view, nil); err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"abc.def", "s3cr3t", tok, "MfKQ9r8", "abcdef"} {
			if strings.Contains(b.String(), secret) {
				t.Errorf("%s view prints %q:\n%s", tc.name, secret, b.String())
			}
		}
		if !json.Valid(b.Bytes()) {
			t.Errorf("%s view is not valid JSON after redaction:\n%s", tc.name, b.String())
		}
	}
}

func TestPrintOutputUnknownFormat(t *testing.T) {
	err := printOutput(io.Discard, "xml", listOf([]outputRow{}), func(io.Writer) {})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "table, json, yaml") {
		t.Errorf("printOutput(%q) = %v, want a usage error naming table, json, yaml", "xml", err)
	}
}

func TestCheckOneOf(t *testing.T) {
	allowed := []string{"pending", "delivered", "dead"}
	tests := []struct {
		value string
		ok    bool
	}{{"pending", true}, {"dead", true}, {"Dead", false}, {"", false}, {"bogus", false}}
	for _, tc := range tests {
		err := checkOneOf("--status", tc.value, allowed)
		var ee *exitError
		got := err == nil
		if got != tc.ok || (err != nil && (!errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "pending, delivered, dead"))) {
			t.Errorf("checkOneOf(%q) = %v, want ok %v (else a usage error naming the values)", tc.value, err, tc.ok)
		}
	}
}

func TestCheckKnown(t *testing.T) {
	tests := []struct {
		value      string
		configured []string
		stored     bool
		want       string // "" for no error, else a part of the usage error
	}{
		{"", []string{"inbox"}, false, ""},
		{"inbox", []string{"inbox"}, false, ""},
		{"old", []string{"inbox"}, true, ""}, // removed from the configuration, still stored
		{"inbx", []string{"inbox", "zoom"}, false, `--source "inbx": not one of inbox, zoom (configured)`},
		{"inbx", nil, false, `--source "inbx": nothing configured or stored has this name`},
	}
	for _, tc := range tests {
		asked := false
		err := checkKnown("--source", tc.value, tc.configured, func() (bool, error) { asked = true; return tc.stored, nil })
		var ee *exitError
		switch {
		case tc.want == "" && err != nil, tc.want != "" && (!errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkKnown(%q, %v, stored %v) = %v, want %q", tc.value, tc.configured, tc.stored, err, tc.want)
		case asked && (tc.value == "" || slices.Contains(tc.configured, tc.value)):
			t.Errorf("checkKnown(%q, %v) asked the store about a configured name", tc.value, tc.configured)
		}
	}
	storeErr := errors.New("disk on fire")
	if err := checkKnown("--source", "x", nil, func() (bool, error) { return false, storeErr }); !errors.Is(err, storeErr) {
		t.Errorf("checkKnown with a failing store = %v, want its error", err)
	}
}

// TestBadOutputAndFilterValues: an unknown -o or filter value is a usage error (exit 2) that
// names the allowed values, before any store is opened or any request is sent.
func TestBadOutputAndFilterValues(t *testing.T) {
	t.Setenv("BRIDGE_API_BASE_URL", "http://127.0.0.1:1/developer/v1")
	t.Setenv("BRIDGE_API_KEY", "mk_live_unused")
	config := filepath.Join(t.TempDir(), "bridge.yaml")
	os.WriteFile(config, []byte("store: {dsn: "+filepath.Join(filepath.Dir(config), "bridge.db")+"}\nsources: [{name: inbox, type: localdir, path: .}]\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "list", "-o", "bogus"}, `-o "bogus": not one of table, json, yaml`},
		{[]string{"jobs", "show", "j1", "--output", "xml"}, `-o "xml": not one of table, json, yaml`},
		{[]string{"deliveries", "list", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"deliveries", "show", "d1", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"endpoints", "list", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"export", "list", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"sources", "list", "inbox", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"identities", "plan", "--source", "inbox", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"identities", "reassign", "--source", "inbox", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "list", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "get", "t1", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "members", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "prompts", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "projects", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"api", "workspace", "-o", "bogus"}, "table, json, yaml"},
		{[]string{"deliveries", "list", "--status", "bogus"}, `--status "bogus": not one of pending, delivered, dead`},
		{[]string{"jobs", "list", "--state", "done,sleeping"}, `--state "sleeping": not one of discovered, ready,`},
		{[]string{"api", "list", "--status", "done"}, `--status "done": not one of queued, processing, completed, failed, insufficient_balance`},
		{[]string{"api", "list", "--sort", "title"}, `--sort "title": not one of created_at, -created_at, duration, -duration`},
		{[]string{"api", "export", "t1", "--format", "pdf"}, `--format "pdf": not one of md, txt, json`},
		{[]string{"api", "export-bulk", "t1", "--format", "pdf", "-o", "x.zip"}, `--format "pdf": not one of md, txt, json`},
	}
	for _, tc := range tests {
		args := append(tc.args, "--config", config)
		if tc.args[0] == "api" {
			args = tc.args
		}
		code, out, errs := cli(args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("bridge %s = %d, stdout %q, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(config), "bridge.db")); err == nil {
		t.Errorf("a refused command created the database")
	}
}

// TestOutputJSONAfterRun: after bridge run --once, the list and show commands print one JSON
// document with the documented fields (and YAML with the same ones), and no secret.
func TestOutputJSONAfterRun(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.001 })
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rx.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "inbox"), 0o755)
	os.WriteFile(filepath.Join(dir, "inbox", "call.wav"), wavBytes(4, 1), 0o644)
	os.WriteFile(filepath.Join(dir, "inbox", "notes.txt"), []byte("not a recording"), 0o644)
	os.WriteFile(filepath.Join(dir, "crm.whsec"), []byte(receiverSecret+"\n"), 0o644)
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
sources: [{name: inbox, type: localdir, path: %q, stable_for: 0s, author: "email:sam@acme.test"}]
webhooks:
  - {name: crm, url: %q, secret_file: %q, events: [transcription.completed], allow_private: true, headers: {Authorization: "Bearer sekrit-header"}}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), filepath.Join(dir, "inbox"), rx.URL+"/hooks?token=sekrit-query",
		filepath.Join(dir, "crm.whsec")), 0o644)
	if code, out, errs := cli("run", "--once", "--config", config); code != 0 {
		t.Fatalf("run --once = %d, %s\n%s", code, out, tail(errs, 10))
	}

	// decode runs the command and decodes its stdout, which must be one JSON document.
	decode := func(args ...string) map[string]any {
		t.Helper()
		code, out, errs := cli(append(args, "--config", config)...)
		if code != 0 {
			t.Fatalf("bridge %v = %d\n%s", args, code, errs)
		}
		for _, secret := range []string{sandboxtest.OwnerKey, "whsec_", "sekrit", "0001-01-01"} {
			if strings.Contains(out, secret) {
				t.Errorf("bridge %v prints %q:\n%s", args, secret, out)
			}
		}
		var v map[string]any
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("bridge %v: stdout is not one JSON document (%v):\n%s", args, err, out)
		}
		return v
	}
	items := func(v map[string]any) []map[string]any {
		t.Helper()
		raw, ok := v["items"].([]any)
		if !ok {
			t.Fatalf("no items array in %v", v)
		}
		var out []map[string]any
		for _, it := range raw {
			out = append(out, it.(map[string]any))
		}
		return out
	}
	rfc3339UTC := func(what string, v any) {
		t.Helper()
		s, _ := v.(string)
		if ts, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") || ts.IsZero() {
			t.Errorf("%s = %v, want an RFC 3339 time in UTC", what, v)
		}
	}

	jobs := items(decode("jobs", "list", "-o", "json"))
	states := map[string]string{}
	var doneID string
	for _, j := range jobs {
		states[j["item_id"].(string)] = j["state"].(string)
		for _, k := range []string{"id", "source", "item_id", "version", "name", "size", "state", "attempts", "created_at", "updated_at"} {
			if _, ok := j[k]; !ok {
				t.Errorf("job %v has no %q", j["item_id"], k)
			}
		}
		rfc3339UTC("created_at", j["created_at"])
		if j["state"] == "done" {
			doneID = j["id"].(string)
			if j["transcription_id"] == "" || j["idempotency_key"] == "" || j["author"] != "email:sam@acme.test" {
				t.Errorf("done job = %v, want its transcription_id, idempotency_key and author", j)
			}
		}
	}
	if want := map[string]string{"call.wav": "done", "notes.txt": "skipped"}; !reflect.DeepEqual(states, want) {
		t.Errorf("jobs list -o json states = %v, want %v", states, want)
	}

	job := decode("jobs", "show", doneID, "-o", "json")
	if job["id"] != doneID || job["state"] != "done" {
		t.Errorf("jobs show -o json = %v, want the job itself", job)
	}
	hist, _ := job["history"].([]any)
	if len(hist) < 3 || hist[len(hist)-1].(map[string]any)["to"] != "done" {
		t.Errorf("jobs show history = %v, want the changes up to done", hist)
	}

	ds := items(decode("deliveries", "list", "-o", "json", "--status", "delivered"))
	if len(ds) != 1 || ds[0]["endpoint"] != "crm" || ds[0]["type"] != "transcription.completed" || ds[0]["last_status"] != 204.0 ||
		ds[0]["job_id"] != doneID || !strings.HasPrefix(fmt.Sprint(ds[0]["webhook_id"]), "msg_") {
		t.Fatalf("deliveries list -o json = %v, want one delivered transcription.completed to crm", ds)
	}
	if _, ok := ds[0]["next_attempt_at"]; ok {
		t.Errorf("a delivered delivery has next_attempt_at: %v", ds[0])
	}
	d := decode("deliveries", "show", ds[0]["id"].(string), "-o", "json")
	attempts, _ := d["history"].([]any)
	if d["id"] != ds[0]["id"] || len(attempts) != 1 || attempts[0].(map[string]any)["status"] != 204.0 {
		t.Errorf("deliveries show -o json = %v, want the delivery and its one attempt", d)
	}
	if data, _ := d["data"].(map[string]any); data["transcription_id"] != ds[0]["transcription_id"] || data["source"] == nil {
		t.Errorf("deliveries show data = %v, want the event's data", d["data"])
	}

	eps := items(decode("endpoints", "list", "-o", "json"))
	if len(eps) != 1 || eps[0]["name"] != "crm" || eps[0]["state"] != "enabled" || eps[0]["all_events"] != false ||
		!reflect.DeepEqual(eps[0]["header_names"], []any{"Authorization"}) || strings.Contains(fmt.Sprint(eps[0]["url"]), "token") {
		t.Errorf("endpoints list -o json = %v", eps)
	}

	recs := decode("sources", "list", "inbox", "-o", "json", "--limit", "1")
	if len(items(recs)) != 1 || recs["total"] != 2.0 {
		t.Errorf("sources list --limit 1 -o json = %v, want one item of total 2", recs)
	}

	// YAML carries the same document.
	code, out, errs := cli("jobs", "list", "-o", "yaml", "--config", config)
	var fromYAML any
	if err := yaml.Unmarshal([]byte(out), &fromYAML); code != 0 || err != nil {
		t.Fatalf("jobs list -o yaml = %d, %v\n%s%s", code, err, out, errs)
	}
	_, jout, _ := cli("jobs", "list", "-o", "json", "--config", config)
	var fromJSON any
	json.Unmarshal([]byte(jout), &fromJSON)
	if !reflect.DeepEqual(normalize(fromJSON), normalize(fromYAML)) {
		t.Errorf("jobs list -o yaml reads as %v, want the JSON %v", fromYAML, fromJSON)
	}
}
