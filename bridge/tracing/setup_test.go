package tracing

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestSetup(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{"off by default", nil, false, ""},
		{"an endpoint turns it on (http/protobuf)", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"a traces endpoint too", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, ""},
		{"disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{"json protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"bad sampler", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_TRACES_SAMPLER": "sometimes"}, false, "OTEL_TRACES_SAMPLER"},
		{"bad ratio", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, false, "OTEL_TRACES_SAMPLER_ARG"},
	} {
		stop, on, err := Setup(context.Background(), func(k string) string { return tc.env[k] })
		if on != tc.on || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: Setup = on %v, %v; want on %v, an error naming %q", tc.name, on, err, tc.on, tc.err)
		}
		if Enabled() != on {
			t.Errorf("%s: Enabled() = %v after Setup, want %v", tc.name, Enabled(), on)
		}
		stop(context.Background())
		if Enabled() {
			t.Errorf("%s: still enabled after shutdown", tc.name)
		}
	}
}

// TestSampledByTraceID: with a ratio sampler every stage of a recording decides alike, in any
// process: the decision depends on the job's id alone.
func TestSampledByTraceID(t *testing.T) {
	root, _, err := sampler(func(k string) string {
		return map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sampled := Sampled(root)
	yes := 0
	for i := range 200 {
		id, _ := traceID(uuid.Must(uuid.NewV7()).String())
		_ = i
		a, b := sampled(id), sampled(id)
		if a != b {
			t.Fatalf("sampled(%s) changed its mind", id)
		}
		if a {
			yes++
		}
	}
	if yes == 0 || yes == 200 {
		t.Errorf("a 0.5 ratio sampled %d of 200 traces", yes)
	}
}

func TestTraceID(t *testing.T) {
	a, b := TraceID("01a21d39-4f15-72ab-8f28-d9c2a72168f2"), TraceID("01a21d39-4f15-72ab-8f28-d9c2a72168f3")
	if len(a) != 32 || a == b || a != TraceID("01a21d39-4f15-72ab-8f28-d9c2a72168f2") {
		t.Errorf("TraceID = %q and %q: want 32 hex digits, the same for a job, another for another job", a, b)
	}
	if got := TraceID(""); got != "" {
		t.Errorf("TraceID(\"\") = %q, want \"\"", got)
	}
}
