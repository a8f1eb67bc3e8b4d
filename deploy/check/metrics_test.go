package check

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// promQL is Prometheus's own PromQL parser, with its default options (what a Prometheus
// server without feature flags accepts).
var promQL = parser.NewParser(parser.Options{})

// usage is one series selector of a PromQL expression: the metric, its label matchers (the
// name's own left out), and the labels the aggregations around it group by.
type usage struct {
	metric   string
	matchers []*labels.Matcher
	grouping []string
}

// usages parses expr and returns every selector in it.
func usages(expr string) ([]usage, error) {
	e, err := promQL.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []usage
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		u := usage{metric: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name != model.MetricNameLabel {
				u.matchers = append(u.matchers, m)
			}
		}
		for _, p := range path {
			if a, ok := p.(*parser.AggregateExpr); ok && !a.Without {
				u.grouping = append(u.grouping, a.Grouping...)
			}
		}
		out = append(out, u)
		return nil
	})
	return out, nil
}

// dynamicValues are label values docs/operations.md documents that a healthy bridge need not have
// served yet (no 5xx, no DELETE): "metric/label" → the documented form.
var dynamicValues = map[string]*regexp.Regexp{
	"bridge_api_requests_total/status": regexp.MustCompile(`^([1-5][0-9][0-9]|error)$`),
	"bridge_api_requests_total/method": regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE)$`),
}

// served is a scrape's families, with each family's label values.
type served map[string]*dto.MetricFamily

// family returns the family a selector's metric reads: the metric itself, or a histogram's
// _bucket, _sum or _count series (and whether it is a _bucket, which has the label le).
func (s served) family(metric string) (*dto.MetricFamily, bool) {
	if f := s[metric]; f != nil {
		return f, false
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(metric, suffix)
		if f := s[base]; ok && f != nil && (f.GetType() == dto.MetricType_HISTOGRAM || suffix != "_bucket" && f.GetType() == dto.MetricType_SUMMARY) {
			return f, suffix == "_bucket"
		}
	}
	return nil, false
}

// labelValues returns a family's label names and the values each takes.
func labelValues(f *dto.MetricFamily) map[string][]string {
	out := map[string][]string{}
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if !slices.Contains(out[l.GetName()], l.GetValue()) {
				out[l.GetName()] = append(out[l.GetName()], l.GetValue())
			}
		}
	}
	return out
}

// problems says what of u the scrape does not serve: the metric, a label it matches or groups
// by, a literal value it matches (a regular expression's literal alternatives too).
func (s served) problems(u usage) []string {
	f, bucket := s.family(u.metric)
	if f == nil {
		return []string{fmt.Sprintf("metric %s is not served at /metrics", u.metric)}
	}
	values := labelValues(f)
	if bucket {
		values["le"] = []string{"+Inf"}
	}
	var out []string
	for _, m := range u.matchers {
		known, ok := values[m.Name]
		if !ok {
			out = append(out, fmt.Sprintf("%s has no label %s (labels: %s)", u.metric, m.Name, names(values)))
			continue
		}
		for _, v := range literals(m) {
			if dyn := dynamicValues[f.GetName()+"/"+m.Name]; !slices.Contains(known, v) && (dyn == nil || !dyn.MatchString(v)) {
				out = append(out, fmt.Sprintf("%s{%s}: no series has %s=%q (served: %q)", u.metric, m, m.Name, v, known))
			}
		}
	}
	for _, g := range u.grouping {
		if _, ok := values[g]; !ok {
			out = append(out, fmt.Sprintf("%s is grouped by %s, a label it does not have (labels: %s)", u.metric, g, names(values)))
		}
	}
	return out
}

// literals are the plain values a matcher names: its value, or its regular expression's
// alternatives that are plain text ("failed|dead|gone"; "5.." is not).
func literals(m *labels.Matcher) []string {
	if m.Type == labels.MatchEqual || m.Type == labels.MatchNotEqual {
		return []string{m.Value}
	}
	var out []string
	for alt := range strings.SplitSeq(m.Value, "|") {
		if alt != "" && regexp.QuoteMeta(alt) == alt {
			out = append(out, alt)
		}
	}
	return out
}

func names(values map[string][]string) string {
	var out []string
	for k := range values {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// liveConfig is the bridge the metrics are read from: the in-process sandbox, a folder source,
// a webhook endpoint on the test's receiver and an export, so that every series exists: the
// configured names at zero, the API's and the histograms once a recording has gone through.
const liveConfig = `api: {base_url: ""}
store: {driver: sqlite, dsn: ./bridge.db}
sandbox: {db: ./sandbox.db, time_scale: 0.01}
server: {addr: %q, metrics_addr: %q}
sources:
  - {name: inbox, type: localdir, path: ./inbox, schedule: "@every 1s", stable_for: 1s, author: "email:owner@acme.test"}
webhooks:
  - {name: crm, url: %q, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", allow_private: true, events: [transcription.completed]}
exports:
  - {name: nightly, schedule: "0 2 * * *", destination: ./exports}
`

// liveScrape runs a bridge, sends a recording through it to a webhook receiver, and returns its
// /metrics once the delivery's latency has been observed.
func liveScrape(t *testing.T) served {
	t.Helper()
	var delivered atomic.Int32
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rx.Close)
	dir := t.TempDir()
	for _, d := range []string{"inbox", "exports"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, liveConfig, addr, metricsAddr, rx.URL+"/hooks"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, dir, []string{"TMPDIR=" + dir}, "run", "--config", cfg)
	copyFile(t, "sandbox/testdata/media/speech.wav", filepath.Join(dir, "inbox", "speech.wav"))
	url := "http://" + metricsAddr + "/metrics"
	var fams served
	waitFor(t, p, "a delivery to the receiver and its latency in /metrics", func() (bool, string) {
		if delivered.Load() == 0 {
			return false, "no delivery received"
		}
		f, err := scrape(url)
		if err != nil {
			return false, err.Error()
		}
		fams = f
		return fams["bridge_delivery_latency_seconds"] != nil, "no bridge_delivery_latency_seconds"
	})
	p.stop(t, time.Minute)
	return fams
}

// TestServedMetrics runs a bridge and reads its /metrics: every metric the alerts, the
// dashboard and docs/operations.md's table name is served, with the labels and label values they use.
func TestServedMetrics(t *testing.T) {
	s := liveScrape(t)
	t.Run("alerts", func(t *testing.T) {
		for _, r := range loadAlerts(t, "deploy/prometheus/alerts.yaml") {
			checkServed(t, s, "alert "+r.Alert, r.Expr)
		}
	})
	t.Run("dashboard", func(t *testing.T) {
		for _, p := range dashboardPanels(t) {
			for _, tg := range p.Targets {
				checkServed(t, s, fmt.Sprintf("panel %q %s", p.Title, tg.RefID), grafanaToPromQL(t, tg.Expr))
			}
		}
	})
	t.Run("docs", func(t *testing.T) {
		for _, m := range documentedMetrics(t) {
			if f, _ := s.family(m); f == nil {
				t.Errorf("docs/operations.md documents %s; /metrics does not serve it", m)
			}
		}
	})
}

// checkServed fails for each selector of expr that the scrape does not serve.
func checkServed(t *testing.T, s served, what, expr string) {
	t.Helper()
	us, err := usages(expr)
	if err != nil {
		t.Errorf("%s: %q: %v", what, expr, err)
		return
	}
	if len(us) == 0 {
		t.Errorf("%s: %q reads no metric", what, expr)
	}
	for _, u := range us {
		for _, p := range s.problems(u) {
			t.Errorf("%s: %s", what, p)
		}
	}
}

// TestProblems proves the check can fail: a misspelt metric, label, value and grouping are
// each reported against a small scrape.
func TestProblems(t *testing.T) {
	name, label, typ := "bridge_deliveries_total", "outcome", dto.MetricType_COUNTER
	value := "failed"
	s := served{name: {Name: &name, Type: &typ, Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: &label, Value: &value}}}}}}
	for _, tc := range []struct {
		expr string
		want int
	}{
		{`sum by (outcome) (rate(bridge_deliveries_total{outcome=~"failed"}[5m]))`, 0},
		{`rate(bridge_delivery_total[5m])`, 1},
		{`rate(bridge_deliveries_total{endpoint="crm"}[5m])`, 1},
		{`rate(bridge_deliveries_total{outcome="faild"}[5m])`, 1},
		{`rate(bridge_deliveries_total{outcome=~"failed|dead"}[5m])`, 1},
		{`sum by (endpoint) (rate(bridge_deliveries_total[5m]))`, 1},
	} {
		us, err := usages(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range us {
			got = append(got, s.problems(u)...)
		}
		if len(got) != tc.want {
			t.Errorf("problems(%q) = %q, want %d", tc.expr, got, tc.want)
		}
	}
}
