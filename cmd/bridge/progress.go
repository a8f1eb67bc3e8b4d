package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (progress is drawn only there).
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the root's stderr (logOutput)
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressPrinter returns a callback drawing upload progress in bytes on w, a terminal (callers
// check): "upload  42% |████      | (1.2/2.9 MB, 3.1 MB/s)". An attempt that starts over (a
// retry) starts a new bar on the same line; callers end the line when the upload returns.
func progressPrinter(w io.Writer) func(sent, total int64) {
	var bar *progressbar.ProgressBar
	var last int64
	return func(sent, total int64) {
		if bar == nil || sent < last || bar.GetMax64() != total {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("upload"),
				progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetPredictTime(false))
		}
		last = sent
		bar.Set64(sent)
	}
}

// progressBar returns a progress callback drawing "label  50% |█████     | (5/10)" on w when w is
// a terminal, ending the line once done reaches total, and nil otherwise (callers then report
// nothing).
func progressBar(w io.Writer, label string) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	return countBar(w, label)
}

// countBar draws done out of total on w (the drawing part of progressBar); the total may change
// between calls.
func countBar(w io.Writer, label string) func(done, total int) {
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if total <= 0 {
			return
		}
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(false),
				progressbar.OptionOnCompletion(func() { io.WriteString(w, "\n") }))
		}
		if bar.GetMax() != total {
			bar.ChangeMax(total)
		}
		bar.Set(done)
	}
}
