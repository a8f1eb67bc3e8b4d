package bridge_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/robfig/cron/v3"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestCronLogger: a scheduled job's panic is logged at ERROR with its stack through the
// bridge's logger (its level and format), not printed on stdout; a skipped run is a DEBUG line.
func TestCronLogger(t *testing.T) {
	var buf bytes.Buffer
	cl := bridge.CronLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	cron.NewChain(cron.Recover(cl)).Then(cron.FuncJob(func() { panic("scan exploded") })).Run()
	line := buf.String()
	if !strings.Contains(line, `"level":"ERROR","msg":"cron: panic"`) || !strings.Contains(line, `"error":"scan exploded"`) ||
		!strings.Contains(line, `"stack":`) {
		t.Errorf("panic logged as %s", line)
	}
	buf.Reset()
	cl.Info("skip")
	if buf.Len() != 0 {
		t.Errorf("a skipped run logged at INFO: %s", buf.String())
	}
}
