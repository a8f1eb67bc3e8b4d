package s3client

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/smithy-go/logging"
)

// TestSDKLogsThroughSlog: the SDK's own log lines (its "SDK … WARN" lines) go through the
// bridge's slog logger, in its format, not straight to stderr (issue 31, point 8).
func TestSDKLogsThroughSlog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	c, err := New(context.Background(), Options{Region: "eu-central-1", Endpoint: "http://127.0.0.1:1", PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test-secret", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	c.Options().Logger.Logf(logging.Warn, "Response has no supported checksum. Not validating response payload.")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("SDK warning wrote %q to the bridge's logger, want one JSON line: %v", buf.String(), err)
	}
	if line["level"] != "WARN" || line["msg"] != "aws sdk: Response has no supported checksum. Not validating response payload." {
		t.Errorf("SDK warning = %v, want level WARN and the SDK's message", line)
	}
}
