// Package s3 is the S3 source (aws-sdk-go-v2): a bucket and prefix, listed with ListObjectsV2,
// each object streamed with GetObject. It works with S3-compatible servers (endpoint +
// path_style) and registers itself as type "s3".
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/s3client"
)

// Source is an S3 source.
type Source struct {
	cfg    Config
	client *s3.Client
	// saveEvery is how often, at most, ListPages hands over a cursor of what it listed so far
	// (cursorSaveInterval; tests set less).
	saveEvery time.Duration
}

var (
	_ connectors.Source     = (*Source)(nil)
	_ connectors.Finisher   = (*Source)(nil)
	_ connectors.PageLister = (*Source)(nil)
)

// New builds the client: credentials from cfg (SecretAccessKey, else read from
// SecretAccessKeyFile) or the standard AWS chain, checksums only when required (S3-compatible
// servers refuse the SDK's default CRCs). Unset fields take their defaults (SetDefaults). It
// fails on a bad config (an *connectors.OptionError naming the option) or an unreadable secret
// file.
func New(ctx context.Context, cfg Config) (*Source, error) {
	cfg.SetDefaults()
	err := cfg.Validate()
	if err == nil {
		err = cfg.readSecret()
	}
	if err != nil {
		return nil, err
	}
	cfg.ownerMeta, cfg.ownerKey, _ = cfg.owner()
	client, err := s3client.New(ctx, s3client.Options{Region: cfg.Region, Endpoint: cfg.Endpoint, PathStyle: cfg.PathStyle,
		AccessKeyID: cfg.AccessKeyID, SecretAccessKey: cfg.SecretAccessKey})
	if err != nil {
		return nil, err
	}
	return &Source{cfg: cfg, client: client, saveEvery: cursorSaveInterval}, nil
}

// needsHead reports whether the configuration needs what only HEAD gives: user metadata.
func (s *Source) needsHead() bool { return s.cfg.UserMetadata || s.cfg.ownerMeta != "" }

func (s *Source) wanted(o object) bool {
	if strings.HasSuffix(o.key, "/") { // a "folder" marker
		return false
	}
	if s.cfg.MinSize > 0 && o.size < s.cfg.MinSize || s.cfg.MaxSize > 0 && o.size > s.cfg.MaxSize {
		return false
	}
	return connectors.Wanted(s.cfg.Include, s.cfg.Exclude, strings.TrimPrefix(o.key, s.cfg.Prefix))
}

// describe turns objects into recordings, in order: as listed, or, when the configuration
// needs user metadata, read with HEAD, head_concurrency at a time. The recording of an object
// gone or changed in between is nil.
func (s *Source) describe(ctx context.Context, objs []object) []*connectors.Recording {
	recs := make([]*connectors.Recording, len(objs))
	if !s.needsHead() {
		for i, o := range objs {
			r := s.recording(o, nil)
			recs[i] = &r
		}
		return recs
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.cfg.HeadConcurrency)
	for i, o := range objs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(o.key)})
			if err != nil || strings.Trim(aws.ToString(head.ETag), `"`) != o.etag {
				return // gone, changed, or unreadable right now: the next scan sees it again
			}
			r := s.recording(o, head.Metadata)
			recs[i] = &r
		})
	}
	wg.Wait()
	return recs
}

// recording is the recording of a listed object, with its user metadata (from HEAD) as
// fields when read.
func (s *Source) recording(o object, meta map[string]string) connectors.Recording {
	r := connectors.Recording{ItemID: o.key, Version: o.etag, Name: path.Base(o.key), Size: o.size, ModTime: o.modified,
		Link: "s3://" + s.cfg.Bucket + "/" + o.key, SourceExternalID: fmt.Sprintf("s3:%s/%s@%s", s.cfg.Bucket, o.key, o.etag)}
	if len(meta) > 0 {
		r.Fields = map[string]string{}
		for k, v := range meta {
			r.Fields[strings.ToLower(k)] = v
		}
	}
	var owner string
	switch {
	case s.cfg.ownerMeta != "":
		owner = r.Fields[s.cfg.ownerMeta]
	case s.cfg.ownerKey != nil:
		if m := s.cfg.ownerKey.FindStringSubmatch(o.key); m != nil {
			owner = m[1]
		}
	}
	if owner != "" {
		r.Owner = &connectors.Owner{Provider: "s3", ID: owner}
		if strings.Contains(owner, "@") {
			r.Owner.Email = owner
		}
	}
	return r
}

// Open streams the object at the recording's ETag (If-Match): a replaced object fails with
// an error instead of uploading other bytes. After the SDK's own retries, 5xx, 429, throttling
// codes, network failures and a body shorter than the object are transient errors
// (connectors.ErrTransient); 404, 412 (changed) and 403 are permanent.
func (s *Source) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID),
		IfMatch: aws.String(`"` + r.Version + `"`)})
	if err != nil {
		err = fmt.Errorf("get s3://%s/%s@%s: %w", s.cfg.Bucket, r.ItemID, r.Version, describeErr(err))
		if ctx.Err() == nil {
			err = classify(err)
		}
		return nil, err
	}
	if etag := strings.Trim(aws.ToString(out.ETag), `"`); etag != r.Version {
		out.Body.Close()
		return nil, fmt.Errorf("get s3://%s/%s: changed (ETag %s, want %s)", s.cfg.Bucket, r.ItemID, etag, r.Version)
	}
	return connectors.ExactBody(out.Body, r.Size, fmt.Sprintf("get s3://%s/%s", s.cfg.Bucket, r.ItemID)), nil
}

// transientCodes are S3 error codes that may pass whatever their status.
var transientCodes = map[string]bool{"SlowDown": true, "RequestTimeout": true, "InternalError": true,
	"ServiceUnavailable": true, "Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"TooManyRequestsException": true}

// classify marks err transient when it may pass: an answer of 5xx, 429 or a throttling code
// (with its Retry-After, if any), or no answer at all (a network failure).
func classify(err error) error {
	var status interface{ HTTPStatusCode() int }
	var ae smithy.APIError
	var send *smithyhttp.RequestSendError
	switch {
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

// Finish deletes the object once its job is done, when delete_after is set and the object is
// still the version that was transcribed.
func (s *Source) Finish(ctx context.Context, r connectors.Recording, outcome connectors.Outcome) error {
	if !s.cfg.DeleteAfter || outcome != connectors.OutcomeDone {
		return nil
	}
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID)})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete_after s3://%s/%s: %w", s.cfg.Bucket, r.ItemID, err)
	}
	if strings.Trim(aws.ToString(head.ETag), `"`) != r.Version {
		return nil // replaced since: the new version is its own job
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID)}); err != nil {
		return fmt.Errorf("delete_after s3://%s/%s: %w", s.cfg.Bucket, r.ItemID, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var nf *types.NotFound
	var nk *types.NoSuchKey
	var re interface{ HTTPStatusCode() int }
	return errors.As(err, &nf) || errors.As(err, &nk) || errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
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

// Check implements connectors.Checker: the bucket answers and the prefix can be listed with
// these credentials.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	where := fmt.Sprintf("s3://%s/%s", s.cfg.Bucket, s.cfg.Prefix)
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.cfg.Bucket)}); err != nil {
		return nil, fmt.Errorf("bucket %s: not reachable with these credentials (s3:ListBucket needed): %w", s.cfg.Bucket, err)
	}
	out, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(s.cfg.Prefix), MaxKeys: aws.Int32(1)})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w (s3:ListBucket needed)", where, err)
	}
	lines := []string{"bucket " + s.cfg.Bucket + " reachable", "listing " + where + " allowed"}
	if len(out.Contents) > 0 {
		key := aws.ToString(out.Contents[0].Key)
		if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key)}); err != nil {
			return lines, fmt.Errorf("read %s: %w (s3:GetObject needed)", key, err)
		}
		lines = append(lines, "reading objects allowed ("+key+")")
	}
	if s.cfg.DeleteAfter {
		lines = append(lines, "delete_after is on: s3:DeleteObject is needed once transcripts are done (not tried)")
	}
	return lines, nil
}
