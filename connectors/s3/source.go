// Package s3 is the S3 source (aws-sdk-go-v2): a bucket and prefix, listed with ListObjectsV2,
// each object streamed with GetObject. It finds the bucket's region when none is set
// (region.go), and skips archived objects with the reason or has them restored (archive.go). It
// works with S3-compatible servers (endpoint + path_style) and registers itself as type "s3".
package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/s3client"
)

// Source is an S3 source.
type Source struct {
	cfg Config
	// Log receives warnings (default: discarded).
	Log *slog.Logger
	// saveEvery is how often, at most, ListPages hands over a cursor of what it listed so far
	// (cursorSaveInterval; tests set less).
	saveEvery time.Duration

	mu sync.Mutex
	// client calls the bucket's region once located (api); before, the configured or default one.
	client  *s3.Client
	located bool
	named   bool // S3 named the bucket's region (region unset)
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
	return &Source{cfg: cfg, client: client, located: cfg.Region != "", saveEvery: cursorSaveInterval}, nil
}

// SetLogger sets where the source's warnings go (the bridge's logger).
func (s *Source) SetLogger(l *slog.Logger) { s.Log = l }

func (s *Source) warn(msg, about string, err error) {
	if s.Log != nil {
		s.Log.Warn(msg, "source", "s3://"+s.cfg.Bucket+"/"+s.cfg.Prefix, "about", about, "error", err)
	}
}

// needsMeta reports whether the configuration needs what only HEAD gives: user metadata.
func (s *Source) needsMeta() bool { return s.cfg.UserMetadata || s.cfg.ownerMeta != "" }

// needsHead reports whether a new object is read with HEAD: for its user metadata, for its
// Intelligent-Tiering tier, or, with restore, for its restore's progress.
func (s *Source) needsHead(o object) bool {
	return s.needsMeta() || o.class == types.ObjectStorageClassIntelligentTiering || s.cfg.Restore && mayBeArchived(o.class)
}

func (s *Source) wanted(o object) bool {
	if strings.HasSuffix(o.key, "/") { // a "folder" marker
		return false
	}
	if s.cfg.MinSize > 0 && o.size < s.cfg.MinSize || s.cfg.MaxSize > 0 && o.size > s.cfg.MaxSize {
		return false
	}
	return connectors.Wanted(s.cfg.Include, s.cfg.Exclude, strings.TrimPrefix(o.key, s.cfg.Prefix))
}

// found is what a listing hands over for an object: its recording and what the cursor keeps of
// it, or no recording (gone or changed since listed, unreadable right now, or being restored):
// the object is left out of the cursor and listed again.
type found struct {
	rec *connectors.Recording
	sum string
}

// describe turns objects into what is handed over, in order: from the listing alone, or read
// with HEAD, head_concurrency at a time, when the object needs it (needsHead).
func (s *Source) describe(ctx context.Context, client *s3.Client, objs []object) []found {
	out := make([]found, len(objs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.cfg.HeadConcurrency)
	for i, o := range objs {
		if !s.needsHead(o) {
			out[i] = s.examine(ctx, client, o, nil)
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(o.key)})
			var nf *types.NotFound
			switch {
			case err != nil && (errors.As(err, &nf) || ctx.Err() != nil):
				return // gone since listed, or stopping: the next scan sees what is there
			case err != nil:
				// Refused (a bucket policy) or failing: handed over from the listing alone, so
				// that the job shows what the object's download answers, never left unseen.
				s.warn("HEAD of an object failed; taken from the listing alone", o.key, err)
				out[i] = s.examine(ctx, client, o, nil)
			case strings.Trim(aws.ToString(head.ETag), `"`) != o.etag:
				return // changed since listed: the next scan lists its new version
			default:
				out[i] = s.examine(ctx, client, o, head)
			}
		})
	}
	wg.Wait()
	return out
}

// examine is what is handed over for an object, with its HEAD when read: a readable object's
// recording; an archived one's, to be skipped with the reason, or, with restore, a restore
// request and nothing yet; nothing while a restore runs.
func (s *Source) examine(ctx context.Context, client *s3.Client, o object, head *s3.HeadObjectOutput) found {
	var meta map[string]string
	var tier types.ArchiveStatus
	if head != nil {
		meta, tier = head.Metadata, head.ArchiveStatus
	}
	switch stateOf(o.class, head) {
	case restoring:
		return found{}
	case readable:
		r := s.recording(o, meta)
		return found{rec: &r, sum: etagSum(o.etag)}
	}
	if s.cfg.Restore {
		if _, err := s.requestRestore(ctx, client, o.key, string(o.class), tier); err != nil && ctx.Err() == nil {
			s.warn("an archived object is not restored; the next scan asks again", o.key, err)
		}
		return found{}
	}
	r := s.recording(o, meta)
	r.Version += archivedVersion
	r.Unavailable = s.archivedReason(o.key, string(o.class), tier)
	return found{rec: &r, sum: archivedSum(o.etag)}
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

// Finish deletes the object once its job is done, when delete_after is set and the object is
// still the version that was transcribed.
func (s *Source) Finish(ctx context.Context, r connectors.Recording, outcome connectors.Outcome) error {
	if !s.cfg.DeleteAfter || outcome != connectors.OutcomeDone {
		return nil
	}
	client, err := s.api(ctx)
	if err != nil {
		return err
	}
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID)})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete_after s3://%s/%s: %w", s.cfg.Bucket, r.ItemID, err)
	}
	if strings.Trim(aws.ToString(head.ETag), `"`) != r.Version {
		return nil // replaced since: the new version is its own job
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(r.ItemID)}); err != nil {
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
