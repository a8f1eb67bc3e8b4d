package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgress: bars are drawn only on a terminal; a count bar shows done/total and ends its
// line once done; the upload printer shows bytes and starts over on a retry.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	if progressBar(&buf, "zoom") != nil {
		t.Error("progressBar on a buffer is not nil: a non-terminal must get nothing")
	}
	bar := countBar(&buf, "zoom")
	for done := 0; done <= 4; done++ {
		bar(done, 4)
	}
	out := buf.String()
	if !strings.Contains(out, "zoom") || !strings.Contains(out, "(4/4") || !strings.HasSuffix(out, "\n") ||
		strings.Count(out, "\n") != 1 {
		t.Errorf("count bar drew %q, want the label, 4/4 and one line end", out)
	}
	buf.Reset()
	up := progressPrinter(&buf)
	for _, sent := range []int64{0, 1 << 20, 2 << 20, 1 << 20, 3 << 20} { // a retry starts over
		up(sent, 3<<20)
	}
	if out := buf.String(); !strings.Contains(out, "upload") || !strings.Contains(out, "100%") || !strings.Contains(out, "MB") {
		t.Errorf("upload printer drew %q, want the bytes up to 100%%", out)
	}
}
