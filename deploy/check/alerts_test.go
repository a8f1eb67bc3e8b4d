package check

import (
	"bytes"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"sigs.k8s.io/yaml"
)

// parseRules parses a rules file with Prometheus's own parser, as promtool check rules and the
// server do (unknown fields refused, every expression and template parsed).
func parseRules(t *testing.T, what string, content []byte) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, err := range errs {
		t.Errorf("%s: %v", what, err)
	}
	if groups == nil || len(errs) > 0 {
		t.FailNow()
	}
	var rules []rulefmt.Rule
	for _, g := range groups.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rule", what)
	}
	return rules
}

// loadAlerts parses a rules file of the repository.
func loadAlerts(t *testing.T, path string) []rulefmt.Rule {
	t.Helper()
	return parseRules(t, path, readRepoFile(t, path))
}

// TestAlertRules: every rule is an alert with a severity, a summary and a description, and the
// chart carries the very same file.
func TestAlertRules(t *testing.T) {
	for _, r := range loadAlerts(t, "deploy/prometheus/alerts.yaml") {
		switch {
		case r.Alert == "":
			t.Errorf("rule %q: not an alert", r.Record)
		case r.Labels["severity"] != "warning" && r.Labels["severity"] != "critical":
			t.Errorf("alert %s: severity = %q, want warning or critical", r.Alert, r.Labels["severity"])
		case r.Annotations["summary"] == "" || r.Annotations["description"] == "":
			t.Errorf("alert %s: summary or description missing", r.Alert)
		}
	}
	src, copied := readRepoFile(t, "deploy/prometheus/alerts.yaml"), readRepoFile(t, chartDir+"/files/alerts.yaml")
	if !bytes.Equal(src, copied) {
		t.Errorf("%s/files/alerts.yaml differs from deploy/prometheus/alerts.yaml: cp deploy/prometheus/alerts.yaml %s/files/", chartDir, chartDir)
	}
}

// TestDocumentedAlerts: the alerts docs/operations.md shows are the file's (same expression, same for).
func TestDocumentedAlerts(t *testing.T) {
	file := map[string]rulefmt.Rule{}
	for _, r := range loadAlerts(t, "deploy/prometheus/alerts.yaml") {
		file[r.Alert] = r
	}
	section := docSection(t, "## Health and metrics")
	m := regexp.MustCompile("(?s)```yaml\n(groups:.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("docs/operations.md, Health and metrics: no ```yaml block of rules")
	}
	for _, r := range parseRules(t, "docs/operations.md's alerts", []byte(m[1])) {
		f, ok := file[r.Alert]
		switch {
		case !ok:
			t.Errorf("docs/operations.md's alert %s is not in deploy/prometheus/alerts.yaml", r.Alert)
		case normalize(f.Expr) != normalize(r.Expr) || f.For != r.For:
			t.Errorf("docs/operations.md's alert %s = %q for %v, want the file's %q for %v", r.Alert, r.Expr, r.For, f.Expr, f.For)
		}
	}
}

// normalize folds an expression's white space.
func normalize(expr string) string { return strings.Join(strings.Fields(expr), " ") }

// operationsPage is the page that documents the metrics and shows the alerts (it was the
// README's "Health and metrics" section until the README was split).
const operationsPage = "docs/operations.md"

// docSection returns operationsPage's section under heading, up to the next of its level.
func docSection(t *testing.T, heading string) string {
	t.Helper()
	text := string(readRepoFile(t, operationsPage))
	_, rest, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s: no section %q", operationsPage, heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// documentedMetrics are the metrics of docs/operations.md's table (Health and metrics).
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(bridge_[a-z_]+)` \\|").FindAllStringSubmatch(docSection(t, "## Health and metrics"), -1) {
		out = append(out, m[1])
	}
	if len(out) < 10 {
		t.Fatalf("docs/operations.md's metrics table: %d metrics found, want the table's (at least 10)", len(out))
	}
	return out
}

// checkPrometheusRule: the chart's PrometheusRule holds deploy/prometheus/alerts.yaml's rules,
// and they parse as Prometheus rules.
func checkPrometheusRule(t *testing.T, o *objects) {
	t.Helper()
	for _, pr := range o.rules {
		spec, err := yaml.Marshal(pr.Spec)
		if err != nil {
			t.Fatal(err)
		}
		got := parseRules(t, "PrometheusRule "+pr.Name, spec)
		want := loadAlerts(t, "deploy/prometheus/alerts.yaml")
		if len(got) != len(want) {
			t.Errorf("PrometheusRule %s: %d rules, want the file's %d", pr.Name, len(got), len(want))
			continue
		}
		for i := range want {
			if got[i].Alert != want[i].Alert || got[i].Expr != want[i].Expr || got[i].For != want[i].For {
				t.Errorf("PrometheusRule %s: rule %d = %s %q, want %s %q", pr.Name, i, got[i].Alert, got[i].Expr, want[i].Alert, want[i].Expr)
			}
		}
	}
}
