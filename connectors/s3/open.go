package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/transcript-bridge/bridge/connectors"
)

// Open streams the object at the recording's ETag (If-Match): a replaced object fails with
// an error instead of uploading other bytes. After the SDK's own retries, 5xx, 429, throttling
// codes, network failures and a body shorter than the object are transient errors
// (connectors.ErrTransient); a refusal about the account (402, a 403 naming billing or a
// licence, AccountProblem) or a bucket in another region than the one set holds the job
// (connectors.ErrBlocked); 404, 412 (changed) and other 403s are permanent. An object archived
// since it was listed is restored and waited for (transient) with restore, and permanent
// without.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	client, err := s.api(ctx)
	if err != nil {
		return nil, err
	}
	etag := strings.TrimSuffix(r.Version, archivedVersion)
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID),
		IfMatch: aws.String(`"` + etag + `"`)})
	if err != nil {
		err = fmt.Errorf("get s3://%s/%s@%s: %w", s.cfg.Bucket, r.ItemID, etag, describeErr(s.wrongRegion(err)))
		if ctx.Err() == nil {
			if isInvalidObjectState(err) {
				return nil, s.archivedSince(ctx, client, r, err)
			}
			err = classify(err)
		}
		return nil, err
	}
	if got := strings.Trim(aws.ToString(out.ETag), `"`); got != etag {
		out.Body.Close()
		return nil, fmt.Errorf("get s3://%s/%s: changed (ETag %s, want %s)", s.cfg.Bucket, r.ItemID, got, etag)
	}
	return connectors.ExactBody(out.Body, r.Size, fmt.Sprintf("get s3://%s/%s", s.cfg.Bucket, r.ItemID)), nil
}

// archivedSince is Open's error for an object GetObject refuses as archived (it was moved to an
// archive class, or its restored copy expired, since it was listed): permanent, naming the fix,
// without restore; with restore, a restore is requested and the job waits for it (transient).
func (s *Source) archivedSince(ctx context.Context, client *s3.Client, r connectors.Recording, err error) error {
	class, tier := "an archive storage class", types.ArchiveStatus("")
	if head, herr := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID)}); herr == nil {
		class, tier = string(head.StorageClass), head.ArchiveStatus
	}
	err = fmt.Errorf("%w: archived in %s", err, where(class, tier))
	if !s.cfg.Restore {
		return fmt.Errorf("%w (set restore: true on the source to have the bridge restore it, then release the job)", err)
	}
	t, rerr := s.requestRestore(ctx, client, r.ItemID, class, tier)
	if rerr != nil {
		return connectors.Transient(fmt.Errorf("%w; %w", err, rerr), restoreWait(t))
	}
	return connectors.Transient(fmt.Errorf("%w; restore requested (%s), waiting for it", err, t), restoreWait(t))
}

// transientCodes are S3 error codes that may pass whatever their status.
var transientCodes = map[string]bool{"SlowDown": true, "RequestTimeout": true, "InternalError": true,
	"ServiceUnavailable": true, "Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"TooManyRequestsException": true}

// classify marks err blocked when it is a refusal about the account (402, a 403 naming billing,
// a licence or a subscription, S3's AccountProblem) or a bucket in another region than the one
// set, and transient when it may pass: an answer of 5xx, 429 or a throttling code (with its
// Retry-After, if any), or no answer at all (a network failure).
func classify(err error) error {
	var status interface{ HTTPStatusCode() int }
	var ae smithy.APIError
	var send *smithyhttp.RequestSendError
	var re *regionError
	switch {
	case errors.As(err, &re):
		return connectors.Blocked(err, 0)
	case errors.As(err, &ae) && ae.ErrorCode() == "AccountProblem",
		errors.As(err, &status) && errors.As(err, &ae) && connectors.BlockedStatus(status.HTTPStatusCode(), ae.ErrorCode()+" "+ae.ErrorMessage()),
		errors.As(err, &status) && status.HTTPStatusCode() == http.StatusPaymentRequired:
		return connectors.Blocked(err, 0)
	case errors.As(err, &ae) && transientCodes[ae.ErrorCode()]:
	case errors.As(err, &status):
		if !connectors.TransientStatus(status.HTTPStatusCode()) {
			return err
		}
	case errors.As(err, &send), connectors.NetFailure(err):
	default:
		return err
	}
	var after time.Duration
	var resp interface{ HTTPResponse() *smithyhttp.Response }
	if errors.As(err, &resp) && resp.HTTPResponse() != nil {
		after = connectors.RetryAfter(resp.HTTPResponse().Header.Get("Retry-After"), time.Now())
	}
	return connectors.Transient(err, after)
}

// describeErr names the common refusals plainly.
func describeErr(err error) error {
	var ae smithy.APIError
	switch {
	case isNotFound(err):
		return fmt.Errorf("gone: %w", err)
	case errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed":
		return fmt.Errorf("changed since it was listed: %w", err)
	}
	return err
}
