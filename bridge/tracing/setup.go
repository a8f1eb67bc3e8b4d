package tracing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is the service.name of the bridge's spans unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) names another.
const ServiceName = "transcript-bridge"

// Setup turns tracing on when the environment asks for it, as the OpenTelemetry specification's
// variables say: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set (or
// OTEL_TRACES_EXPORTER=otlp), and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
// Spans go by OTLP over HTTP with protobuf, the specification's default, or over gRPC with
// OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) grpc; the exporters read
// their endpoint, headers, timeout and TLS settings from the same variables. OTEL_SERVICE_NAME
// and OTEL_RESOURCE_ATTRIBUTES name the service; OTEL_TRACES_SAMPLER and its ARG choose the
// sampler (parentbased_always_on by default). It returns the function that flushes and stops
// the exporter, and whether tracing is on; a value it cannot use is an error naming the
// variable.
func Setup(ctx context.Context, getenv func(string) string) (shutdown func(context.Context) error, on bool, err error) {
	none := func(context.Context) error { return nil }
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	switch {
	case strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"), exporter == "none":
		return none, false, nil
	case exporter != "" && exporter != "otlp":
		return none, false, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported (otlp or none)", exporter)
	case exporter == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "":
		return none, false, nil
	}
	protocol, key := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, key = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	var exp sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return none, false, fmt.Errorf("%s: %q is not supported (http/protobuf or grpc)", key, protocol)
	}
	if err != nil {
		return none, false, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	root, parentBased, err := sampler(getenv)
	if err != nil {
		return none, false, err
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(ServiceName)), resource.Environment())
	if err != nil {
		return none, false, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := NewProvider(sdktrace.NewBatchSpanProcessor(exp), root, parentBased, res)
	Install(tp, Sampled(root))
	return func(ctx context.Context) error {
		Install(nil, nil)
		return tp.Shutdown(ctx)
	}, true, nil
}

// NewProvider returns a provider whose spans go to proc, with the bridge's id generator (a
// recording's root span takes its job's ids), root deciding for spans without a parent and,
// when parentBased, the parent's decision for the others. Tests pass an in-memory processor.
func NewProvider(proc sdktrace.SpanProcessor, root sdktrace.Sampler, parentBased bool, res *resource.Resource) *sdktrace.TracerProvider {
	s := root
	if parentBased {
		s = sdktrace.ParentBased(root)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(proc), sdktrace.WithIDGenerator(NewIDs()), sdktrace.WithSampler(s)}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	return sdktrace.NewTracerProvider(opts...)
}

// Sampled returns the decision root makes for a recording's trace, by its id alone (the root
// span has no parent), for Install: every stage of a recording asks it again and gets the same
// answer, in any process.
func Sampled(root sdktrace.Sampler) func(trace.TraceID) bool {
	return func(id trace.TraceID) bool {
		return root.ShouldSample(sdktrace.SamplingParameters{TraceID: id}).Decision == sdktrace.RecordAndSample
	}
}

// sampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG: the decision for a trace's
// root, and whether children follow their parent.
func sampler(getenv func(string) string) (root sdktrace.Sampler, parentBased bool, err error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	parentBased = name == "" || strings.HasPrefix(name, "parentbased_")
	switch strings.TrimPrefix(name, "parentbased_") {
	case "", "always_on":
		return sdktrace.AlwaysSample(), parentBased, nil
	case "always_off":
		return sdktrace.NeverSample(), parentBased, nil
	case "traceidratio":
		ratio := 1.0
		if arg := getenv("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
			if ratio, err = strconv.ParseFloat(arg, 64); err != nil || ratio < 0 || ratio > 1 {
				return nil, false, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio from 0 to 1", arg)
			}
		}
		return sdktrace.TraceIDRatioBased(ratio), parentBased, nil
	}
	return nil, false, errors.New("OTEL_TRACES_SAMPLER: " + strconv.Quote(name) +
		" is not supported (always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio)")
}
