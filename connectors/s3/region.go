package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/transcript-bridge/bridge/connectors"
)

// A bucket lives in one region. S3 answers a request sent to another region's endpoint with 301
// PermanentRedirect, naming the bucket's region in x-amz-bucket-region, and the SDK does not
// follow it (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html). So with
// region unset the source asks S3 for the bucket's region before its first call
// (manager.GetBucketRegion: an unsigned HeadBucket, which S3 answers with x-amz-bucket-region
// "regardless of the permissions on the bucket",
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html); a server that names no
// region (gofakes3, most S3-compatible servers) keeps the default one. With region set, the
// region is used as is and a 301 is an error naming the region to set (regionError): a region
// pinned by hand may be deliberate, and is not overridden.

// api returns the client for the bucket's region: the configured one, or, with region unset,
// the one S3 names for the bucket, asked once. It fails, transient, when the server cannot be
// reached to ask.
func (s *Source) api(ctx context.Context) (*s3.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.located {
		return s.client, nil
	}
	region, err := manager.GetBucketRegion(ctx, s.client, s.cfg.Bucket)
	if err != nil && noAnswer(err) {
		return nil, connectors.Transient(fmt.Errorf("s3://%s: find the bucket's region: %w", s.cfg.Bucket, err), 0)
	}
	// An answer without the header (or an error status) keeps the default region: the calls
	// that follow report what is wrong, in the service's words.
	if region != "" && region != s.client.Options().Region {
		s.client = s3.New(s.client.Options(), func(o *s3.Options) { o.Region = region })
	}
	s.located, s.named = true, region != ""
	return s.client, nil
}

// region is the region the source's calls go to ("" until found).
func (s *Source) region() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.located {
		return ""
	}
	return s.client.Options().Region
}

// noAnswer reports whether err means the server did not answer (a network failure, a cancel).
func noAnswer(err error) bool {
	var send *smithyhttp.RequestSendError
	return errors.As(err, &send) || connectors.NetFailure(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// regionError is S3's refusal of a call sent to another region than the bucket's.
type regionError struct {
	bucket, region, used string
	err                  error
}

// Error names the bucket's region and the option to set.
func (e *regionError) Error() string {
	return fmt.Sprintf("bucket %s is in region %s, not %s: set region: %s (%v)", e.bucket, e.region, e.used, e.region, e.err)
}

// Unwrap returns S3's answer.
func (e *regionError) Unwrap() error { return e.err }

// fix is what bridge doctor prints beside a regionError.
func (e *regionError) fix() string {
	return fmt.Sprintf("set region: %s in the source's options (or leave region unset: the bridge then asks S3 for the bucket's region)", e.region)
}

// wrongRegion returns err as a *regionError when it is a 301 naming another region for the
// bucket (x-amz-bucket-region), and err itself otherwise.
func (s *Source) wrongRegion(err error) error {
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil || re.Response.StatusCode != http.StatusMovedPermanently {
		return err
	}
	region := re.Response.Header.Get("X-Amz-Bucket-Region")
	if region == "" {
		return err
	}
	used := s.region()
	if used == "" {
		used = s.cfg.Region
	}
	return &regionError{bucket: s.cfg.Bucket, region: region, used: used, err: err}
}
