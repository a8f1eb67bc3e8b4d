package main

import (
	"fmt"
	"io"
	"os"
	"strings"

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

// progressPrinter redraws one line of upload progress.
func progressPrinter(w io.Writer) func(sent, total int64) {
	last := int64(-1)
	return func(sent, total int64) {
		pct := sent * 100 / max(total, 1)
		if pct == last {
			return
		}
		last = pct
		fmt.Fprintf(w, "\rupload %3d%% (%.1f of %.1f MB)", pct, float64(sent)/1e6, float64(total)/1e6)
	}
}

// progressBar returns a progress callback drawing "label [####....] done/total" on w when w is a
// terminal, and nil otherwise (callers then report nothing).
func progressBar(w io.Writer, label string) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	return func(done, total int) {
		const width = 30
		fill := width * done / max(total, 1)
		fmt.Fprintf(w, "\r%s [%s%s] %d/%d", label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
