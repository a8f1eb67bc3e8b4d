package bench

import (
	"cmp"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Chart geometry in pixels: each chart is a chartW×chartH panel whose plot area is inset by
// the margins (left: y ticks and label; right: the legend; top: the title; bottom: x ticks
// and label). Data are drawn a further dataInset inside the plot area's frame.
const (
	chartW, chartH                     = 900, 420
	marginL, marginR, marginT, marginB = 80, 170, 40, 60
	dataInset                          = 8
	legendChars                        = 15
)

var (
	// palette colours the lines of a chart, in order (then again from the start).
	palette = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	}
	black = color.RGBA{0, 0, 0, 255}
	grey  = color.RGBA{120, 120, 120, 255}
	gridC = color.RGBA{228, 228, 228, 255}
)

// Plot draws charts into one PNG written to w: the charts stacked top to bottom, each a
// 900×420 panel on white with its title, a framed plot area with ticked and labelled axes,
// one coloured line with point markers per Line, and a legend. Points that are not finite
// (and, on a LogX chart, those with x <= 0) are left out. Plot fails when charts is empty
// or when w does.
func Plot(w io.Writer, charts []Chart) error {
	if len(charts) == 0 {
		return errors.New("bench: plot: no charts")
	}
	img := image.NewRGBA(image.Rect(0, 0, chartW, chartH*len(charts)))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for i, c := range charts {
		drawChart(img, image.Pt(0, i*chartH), c)
	}
	return png.Encode(w, img)
}

// plotArea is the framed plot area of the chart panel whose top left corner is at.
func plotArea(at image.Point) image.Rectangle {
	return image.Rect(at.X+marginL, at.Y+marginT, at.X+chartW-marginR, at.Y+chartH-marginB)
}

// drawChart draws c into the panel whose top left corner is at.
func drawChart(img *image.RGBA, at image.Point, c Chart) {
	frame := plotArea(at)
	data := frame.Inset(dataInset)
	usable := func(p Point) bool {
		return !math.IsNaN(p.X+p.Y) && !math.IsInf(p.X+p.Y, 0) && (!c.LogX || p.X > 0)
	}
	var xs, ys []float64
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if usable(p) {
				xs, ys = append(xs, p.X), append(ys, p.Y)
			}
		}
	}
	xa, ya := newAxis(xs, c.LogX), newAxis(ys, false)
	px := func(x float64) int { return data.Min.X + int(math.Round(xa.frac(x)*float64(data.Dx()-1))) }
	py := func(y float64) int { return data.Max.Y - 1 - int(math.Round(ya.frac(y)*float64(data.Dy()-1))) }

	for _, t := range xa.ticks {
		x := px(t)
		fill(img, image.Rect(x, frame.Min.Y+1, x+1, frame.Max.Y), gridC)
		fill(img, image.Rect(x, frame.Max.Y, x+1, frame.Max.Y+5), black)
		text(img, fmtTick(t), x, frame.Max.Y+18, 0.5, black)
	}
	for _, t := range ya.ticks {
		y := py(t)
		fill(img, image.Rect(frame.Min.X+1, y, frame.Max.X, y+1), gridC)
		fill(img, image.Rect(frame.Min.X-5, y, frame.Min.X, y+1), black)
		text(img, fmtTick(t), frame.Min.X-8, y+4, 1, black)
	}
	clip := img.SubImage(frame.Inset(1)).(*image.RGBA)
	for i, l := range c.Lines {
		col := palette[i%len(palette)]
		var prev *image.Point
		for _, p := range l.Points {
			if !usable(p) {
				continue
			}
			q := image.Pt(px(p.X), py(p.Y))
			if prev != nil {
				line(clip, *prev, q, col)
			}
			disc(clip, q, 3, col) // the line's colour: the next segment cannot hide it
			prev = &q
		}
	}
	outline(img, frame, black)

	mid := (frame.Min.X + frame.Max.X) / 2
	text(img, c.Title, mid, at.Y+25, 0.5, black)
	text(img, c.Title, mid+1, at.Y+25, 0.5, black) // a second pass one pixel right: bold
	xl := c.XLabel
	if c.LogX {
		xl += " (log scale)"
	}
	text(img, xl, mid, frame.Max.Y+42, 0.5, black)
	vtext(img, c.YLabel, at.X+10, (frame.Min.Y+frame.Max.Y)/2)

	// The legend: a swatch (line and marker) and the name of each line, in a box.
	lx, ly := frame.Max.X+14, frame.Min.Y
	n := min(len(c.Lines), (frame.Dy()-10)/20)
	if n > 0 {
		outline(img, image.Rect(lx, ly, at.X+chartW-8, ly+20*n+10), grey)
	}
	for i, l := range c.Lines[:n] {
		col, y := palette[i%len(palette)], ly+20*i+20
		line(img, image.Pt(lx+8, y-4), image.Pt(lx+30, y-4), col)
		disc(img, image.Pt(lx+19, y-4), 3, col)
		name := []rune(l.Name)
		if len(name) > legendChars {
			name = append(name[:legendChars-2], '.', '.')
		}
		text(img, string(name), lx+38, y, 0, black)
	}
}

// axis maps data values along one axis to [0, 1].
type axis struct {
	lo, hi float64 // the range shown, in data units (log10 of them for a log axis)
	log    bool
	ticks  []float64 // in data units
}

// newAxis returns the axis showing vals: a linear one spans whole ticks, a log one the
// values' range (in log10) padded by 5% each side. Empty or all-equal values get a padded
// range.
func newAxis(vals []float64, log bool) axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > hi { // no values: a padded range about 1
		lo, hi = 1, 1
	}
	if log {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	if hi-lo <= 1e-9*max(math.Abs(lo), math.Abs(hi)) { // all equal: pad by 10% (or ±0.5)
		d := math.Abs(lo) * 0.1
		if d == 0 || log {
			d = 0.5
		}
		lo, hi = lo-d, hi+d
	}
	if log {
		pad := (hi - lo) * 0.05
		return axis{lo: lo - pad, hi: hi + pad, log: true, ticks: logTicks(lo-pad, hi+pad)}
	}
	t := ticks(lo, hi)
	return axis{lo: min(lo, t[0]), hi: max(hi, t[len(t)-1]), ticks: t}
}

// frac is where v falls on a, from 0 (lo) to 1 (hi).
func (a axis) frac(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// ticks returns nice ticks covering [lo, hi]: the multiples of the smallest step of
// 1, 2 or 5 × 10^k that covers the range in at most 5 intervals (4 to 6 ticks).
func ticks(lo, hi float64) []float64 {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []float64{lo}
	}
	for e := math.Floor(math.Log10((hi - lo) / 5)); ; e++ {
		for _, m := range []float64{1, 2, 5} {
			step := scaled(m, e)
			a, b := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
			if b-a <= 5 {
				var t []float64
				for k := a; k <= b; k++ {
					t = append(t, scaled(k*m, e))
				}
				return t
			}
		}
	}
}

// logTicks returns the values 1, 2, 5 × 10^k whose log10 lies in [lo, hi], or only the
// powers of 10 when that makes too many; linear ticks within the range when there are
// fewer than two.
func logTicks(lo, hi float64) []float64 {
	var all, decades []float64
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := scaled(m, e); math.Log10(v) >= lo-1e-9 && math.Log10(v) <= hi+1e-9 {
				all = append(all, v)
				if m == 1 {
					decades = append(decades, v)
				}
			}
		}
	}
	if len(all) > 9 && len(decades) >= 2 {
		return decades
	}
	if len(all) < 2 {
		all = nil
		for _, v := range ticks(math.Pow(10, lo), math.Pow(10, hi)) {
			if v > 0 && math.Log10(v) >= lo && math.Log10(v) <= hi {
				all = append(all, v)
			}
		}
	}
	return all
}

// scaled returns x × 10^e, dividing for e < 0 so that 3 × 10^-1 is exactly 0.3.
func scaled(x, e float64) float64 {
	if e < 0 {
		return x / math.Pow(10, -e)
	}
	return x * math.Pow(10, e)
}

// fmtTick writes a tick value shortly: 250, 0.05, 20k, 1.5M.
func fmtTick(v float64) string {
	div, suffix := 1.0, ""
	if a := math.Abs(v); a >= 1e9 {
		div, suffix = 1e9, "G"
	} else if a >= 1e6 {
		div, suffix = 1e6, "M"
	} else if a >= 1e4 {
		div, suffix = 1e3, "k"
	}
	return strconv.FormatFloat(v/div, 'g', 6, 64) + suffix
}

// fill paints r in c.
func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// outline draws the one-pixel border just inside r.
func outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// line draws a 2-pixel-wide line from a to b (Bresenham, stamping 2×2 squares); pixels
// outside img's bounds are left out.
func line(img *image.RGBA, a, b image.Point, c color.RGBA) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	err := dx + dy
	for x, y := a.X, a.Y; ; {
		for _, o := range [...]image.Point{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			img.SetRGBA(x+o.X, y+o.Y, c)
		}
		if x == b.X && y == b.Y {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x += sx
		}
		if e2 <= dx {
			err += dx
			y += sy
		}
	}
}

// disc draws a filled disc of radius r about p: a point marker.
func disc(img *image.RGBA, p image.Point, r int, c color.RGBA) {
	for y := -r; y <= r; y++ {
		for x := -r; x <= r; x++ {
			if x*x+y*y <= r*r+1 {
				img.SetRGBA(p.X+x, p.Y+y, c)
			}
		}
	}
}

// text draws s with its baseline at y and its anchor at x: align 0 puts x at the text's
// left, 0.5 at its centre, 1 at its right.
func text(img draw.Image, s string, x, y int, align float64, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13}
	d.Dot = fixed.P(x-int(align*float64(d.MeasureString(s).Round())), y)
	d.DrawString(s)
}

// vtext draws s reading upwards, centred on y, with the tops of its letters at x.
func vtext(img *image.RGBA, s string, x, y int) {
	w := font.MeasureString(basicfont.Face7x13, s).Ceil()
	tmp := image.NewRGBA(image.Rect(0, 0, w, 13))
	text(tmp, s, 0, 11, 0, black)
	for i := range w {
		for j := range 13 {
			if tmp.RGBAAt(i, j).A >= 0x80 {
				img.SetRGBA(x+j, y+w/2-i, black)
			}
		}
	}
}

func abs(n int) int { return max(n, -n) }

func sign(n int) int { return cmp.Compare(n, 0) }
