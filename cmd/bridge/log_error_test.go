package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLogErrorKey: an error is logged under one name, "error", in both formats, whatever name
// the code that logged it used (issue 31, point 8).
func TestLogErrorKey(t *testing.T) {
	for _, jsonFormat := range []bool{false, true} {
		for _, key := range []string{"err", "error"} {
			var buf bytes.Buffer
			buildLogger(&buf, slog.LevelInfo, jsonFormat).Error("scan failed", key, errors.New("boom"))
			got := buf.String()
			want := `error=boom`
			if jsonFormat {
				want = `"error":"boom"`
			}
			if !strings.Contains(got, want) || strings.Contains(got, "err=") || strings.Contains(got, `"err"`) {
				t.Errorf("log(json=%v, %q) = %q, want %s and no err", jsonFormat, key, got, want)
			}
		}
	}
}
