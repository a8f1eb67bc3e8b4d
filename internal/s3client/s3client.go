// Package s3client builds an aws-sdk-go-v2 S3 client that works with AWS and with
// S3-compatible servers (MinIO, versitygw, R2, gofakes3): a base endpoint, path-style
// addressing, checksums only when required (such servers refuse the SDK's default CRCs), and
// the proxy of the environment.
package s3client

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/transcript-bridge/bridge/internal/httpenv"
)

// Options reach a bucket.
type Options struct {
	// Region (default: the AWS chain's, else us-east-1).
	Region string
	// Endpoint is an S3-compatible server's base URL; empty is AWS.
	Endpoint string
	// PathStyle addresses buckets as endpoint/bucket/key.
	PathStyle bool
	// AccessKeyID and SecretAccessKey are static credentials; empty uses the standard AWS chain.
	AccessKeyID, SecretAccessKey string
	// Logger receives the SDK's own log lines (its warnings about checksums, retries, …); nil is
	// slog's default logger at the time of each line (the bridge's, once its flags are read).
	Logger *slog.Logger
}

// sdkLogger is the SDK's logging.Logger writing to a slog logger: its lines are the bridge's,
// in its format and level, instead of the SDK's own "SDK 2026/01/02 WARN …" lines on stderr.
type sdkLogger struct{ log *slog.Logger }

// Logf implements logging.Logger: a Warn line at WARN, a Debug line at DEBUG.
func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	log := l.log
	if log == nil {
		log = slog.Default()
	}
	level := slog.LevelWarn
	if c == logging.Debug {
		level = slog.LevelDebug
	}
	log.Log(context.Background(), level, "aws sdk: "+fmt.Sprintf(format, v...), "component", "aws-sdk")
}

// New returns the client. It fails when the AWS configuration cannot be loaded.
func New(ctx context.Context, o Options) (*s3.Client, error) {
	// Every call honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY as they are now.
	proxy := httpenv.Proxy()
	loads := []func(*awsconfig.LoadOptions) error{awsconfig.WithHTTPClient(awshttp.NewBuildableClient().
		WithTransportOptions(func(t *http.Transport) { t.Proxy = proxy })), awsconfig.WithLogger(sdkLogger{o.Logger})}
	if o.Region != "" {
		loads = append(loads, awsconfig.WithRegion(o.Region))
	}
	if o.AccessKeyID != "" {
		loads = append(loads, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("aws configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = o.PathStyle
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}), nil
}
