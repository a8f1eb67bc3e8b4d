package bench

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// sampleCharts are two realistic charts: relay throughput against batch size (log x) and
// lag percentiles against offered rate.
func sampleCharts() []Chart {
	return []Chart{{
		Title: "Relay throughput by batch size", XLabel: "batch size", YLabel: "deliveries/s", LogX: true,
		Lines: []Line{
			{Name: "relay", Points: []Point{{1, 2100}, {8, 11800}, {64, 38500}, {256, 52300}, {1024, 57900}}},
			{Name: "bare loop", Points: []Point{{1, 3900}, {8, 21400}, {64, 61200}, {256, 78800}, {1024, 83100}}},
		},
	}, {
		Title: "Delivery lag by offered rate", XLabel: "offered rate (deliveries/s)", YLabel: "lag (ms)",
		Lines: []Line{
			{Name: "p50", Points: []Point{{1000, 1.2}, {5000, 1.6}, {10000, 2.3}, {20000, 4.1}, {40000, 9.8}}},
			{Name: "p90", Points: []Point{{1000, 2.9}, {5000, 3.8}, {10000, 5.9}, {20000, 11.2}, {40000, 27.5}}},
			{Name: "p99", Points: []Point{{1000, 6.4}, {5000, 8.9}, {10000, 14.7}, {20000, 31.0}, {40000, 88.3}}},
		},
	}}
}

func decode(t *testing.T, charts []Chart) *image.RGBA {
	t.Helper()
	var buf bytes.Buffer
	if err := Plot(&buf, charts); err != nil {
		t.Fatalf("Plot: %v", err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	if want := image.Rect(0, 0, chartW, chartH*len(charts)); img.Bounds() != want {
		t.Fatalf("image bounds = %v, want %v", img.Bounds(), want)
	}
	rgba := image.NewRGBA(img.Bounds())
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			rgba.Set(x, y, img.At(x, y))
		}
	}
	return rgba
}

// count returns how many pixels of r are c (or, with not, are not c).
func count(img *image.RGBA, r image.Rectangle, c color.RGBA, not bool) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if (img.RGBAAt(x, y) == c) != not {
				n++
			}
		}
	}
	return n
}

func TestPlotCharts(t *testing.T) {
	charts := sampleCharts()
	img := decode(t, charts)
	white := color.RGBA{255, 255, 255, 255}
	for i, c := range charts {
		at := image.Pt(0, i*chartH)
		area := plotArea(at).Inset(1)
		for j, l := range c.Lines {
			if n := count(img, area, palette[j], false); n < 50 {
				t.Errorf("chart %d line %q: %d pixels of its colour %v in the plot area, want >= 50", i, l.Name, n, palette[j])
			}
		}
		title := image.Rect(at.X+marginL, at.Y, at.X+chartW-marginR, at.Y+marginT)
		legend := image.Rect(at.X+chartW-marginR, at.Y+marginT, at.X+chartW, at.Y+chartH-marginB)
		for name, r := range map[string]image.Rectangle{"title": title, "legend": legend} {
			if n := count(img, r, white, true); n < 50 {
				t.Errorf("chart %d: %d non-white pixels in the %s area, want >= 50", i, n, name)
			}
		}
	}
	if path := os.Getenv("BENCH_PLOT_SAMPLE"); path != "" {
		var buf bytes.Buffer
		if err := Plot(&buf, charts); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlotEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		charts []Chart
		err    string
	}{
		{name: "no charts", charts: nil, err: "bench: plot: no charts"},
		{name: "one point", charts: []Chart{{Title: "one", Lines: []Line{{Name: "a", Points: []Point{{3, 7}}}}}}},
		{name: "one point log", charts: []Chart{{Title: "one", LogX: true, Lines: []Line{{Name: "a", Points: []Point{{64, 7}}}}}}},
		{name: "flat", charts: []Chart{{Title: "flat", Lines: []Line{{Name: "a", Points: []Point{{1, 5}, {2, 5}, {3, 5}}}}}}},
		{name: "flat zero", charts: []Chart{{Title: "zero", Lines: []Line{{Name: "a", Points: []Point{{1, 0}, {2, 0}}}}}}},
		{name: "no lines", charts: []Chart{{Title: "empty"}}},
		{name: "log with x <= 0", charts: []Chart{{LogX: true, Lines: []Line{{Name: "a", Points: []Point{{0, 1}, {-1, 2}, {10, 3}, {100, 4}}}}}}},
		{name: "long legend name", charts: []Chart{{Lines: []Line{{Name: strings.Repeat("x", 60), Points: []Point{{1, 1}, {2, 3}}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Plot(&buf, tc.charts)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Plot: error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plot: %v", err)
			}
			if _, err := png.Decode(&buf); err != nil {
				t.Fatalf("png.Decode: %v", err)
			}
		})
	}
}

func TestPlotTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 97, []float64{0, 20, 40, 60, 80, 100}},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{3, 97, []float64{0, 20, 40, 60, 80, 100}},
		{1.2, 88.3, []float64{0, 20, 40, 60, 80, 100}},
		{2100, 83100, []float64{0, 20000, 40000, 60000, 80000, 100000}},
		{0.1, 0.5, []float64{0.1, 0.2, 0.3, 0.4, 0.5}},
		{-7, 7, []float64{-10, -5, 0, 5, 10}},
	} {
		if got := ticks(tc.lo, tc.hi); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ticks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestPlotLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64 // data units
		want   []float64
	}{
		{1, 1024, []float64{1, 10, 100, 1000}},
		{1, 256, []float64{1, 2, 5, 10, 20, 50, 100, 200}},
		{300, 400, []float64{300, 320, 340, 360, 380, 400}},
	} {
		lo, hi := math.Log10(tc.lo), math.Log10(tc.hi)
		if got := logTicks(lo, hi); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("logTicks(log10 %v, log10 %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}
