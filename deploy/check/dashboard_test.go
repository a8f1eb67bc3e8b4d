package check

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboard is what this test reads of a Grafana dashboard's JSON model.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

// dashboardPath is the dashboard, from the repository's root.
const dashboardPath = "deploy/grafana/bridge.json"

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(readRepoFile(t, dashboardPath), &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// dashboardPanels are the dashboard's panels that show data (rows left out, collapsed rows'
// panels included).
func dashboardPanels(t *testing.T) []panel {
	t.Helper()
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, p)
		}
	}
	walk(loadDashboard(t).Panels)
	return out
}

// grafanaBuiltins are the variables Grafana itself sets, as a query would have them.
var grafanaBuiltins = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

var variableRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// grafanaToPromQL replaces the dashboard's variables in expr with what Grafana would put there
// (a textbox's default); an undefined variable fails the test.
func grafanaToPromQL(t *testing.T, expr string) string {
	t.Helper()
	expr = grafanaBuiltins.Replace(expr)
	vars := map[string]string{}
	for _, v := range loadDashboard(t).Templating.List {
		vars[v.Name] = v.Query
	}
	return variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		name := strings.TrimPrefix(strings.TrimPrefix(ref, "$"), "{")
		v, ok := vars[name]
		if !ok {
			t.Errorf("%q uses $%s, which the dashboard does not define", expr, name)
		}
		return v
	})
}

// TestDashboard: the dashboard parses, each panel's queries parse as PromQL, the panels do not
// overlap, and together they show every metric docs/operations.md documents (the metrics themselves
// are checked against a running bridge by TestServedMetrics).
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: uid %q, title %q: want both", dashboardPath, d.UID, d.Title)
	}
	var shown []string
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range dashboardPanels(t) {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			us, err := usages(grafanaToPromQL(t, tg.Expr))
			if err != nil {
				t.Errorf("panel %q %s: %q: %v", p.Title, tg.RefID, tg.Expr, err)
			}
			for _, u := range us {
				shown = append(shown, strings.TrimSuffix(u.metric, "_bucket"))
			}
		}
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is outside the 24 columns", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Errorf("panel %q overlaps panel %q at (%d, %d)", p.Title, other, x, y)
					goto next
				}
				taken[cell{x, y}] = p.Title
			}
		}
	next:
	}
	for _, m := range documentedMetrics(t) {
		if !slices.Contains(shown, m) {
			t.Errorf("no panel shows %s (docs/operations.md, Health and metrics)", m)
		}
	}
}
