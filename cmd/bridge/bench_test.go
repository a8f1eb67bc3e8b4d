package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchCommand runs bridge bench relay small, as JSON and with a plot: one document of
// results with the names, units and references the issue fixes, a PNG, and an exit code that
// says whether every goal was met.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the relay workload")
	}
	plot := filepath.Join(t.TempDir(), "bench.png")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"bench", "relay", "--short", "--json", "--plot", plot}, &stdout, &stderr)
	var doc struct {
		Results []struct {
			Name      string   `json:"name"`
			Value     float64  `json:"value"`
			Unit      string   `json:"unit"`
			Reference *float64 `json:"reference"`
			Ratio     *float64 `json:"ratio"`
			Goal      string   `json:"goal"`
			Pass      bool     `json:"pass"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("bench relay --json printed %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	passed := true
	byName := map[string]int{}
	for i, r := range doc.Results {
		byName[r.Name] = i
		passed = passed && r.Pass
		if r.Value <= 0 || r.Goal == "" {
			t.Errorf("%s = %v %s, goal %q: want a positive value and a goal", r.Name, r.Value, r.Unit, r.Goal)
		}
	}
	i, ok := byName["relay_throughput"]
	if !ok {
		t.Fatalf("results = %+v, want relay_throughput", doc.Results)
	}
	if r := doc.Results[i]; r.Unit != "deliveries/s" || r.Reference == nil || r.Ratio == nil || *r.Reference <= 0 {
		t.Errorf("relay_throughput = %+v, want deliveries/s beside the bare loop's reference and their ratio", r)
	}
	if want := map[bool]int{true: exitOK, false: exitFailed}[passed]; code != want {
		t.Errorf("exit code = %d with every goal met %v, want %d (stderr %s)", code, passed, want, stderr.String())
	}
	if !passed && !strings.Contains(stderr.String(), "missed their goal") {
		t.Errorf("stderr = %q, want the figures that missed their goal named", stderr.String())
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dy() < 400 {
		t.Errorf("--plot wrote %v (%v), want a PNG of the charts", img, err)
	}

	// Usage: an unknown workload is the caller's error.
	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"bench", "nope"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("bench nope: exit code %d, want %d (stderr %s)", code, exitUsage, stderr.String())
	}
}
