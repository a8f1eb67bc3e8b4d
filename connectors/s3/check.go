package s3

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-bridge/bridge/connectors"
)

// checkHeads bounds the HEAD requests Check makes to tell the Intelligent-Tiering objects of the
// first page in an archive tier.
const checkHeads = 50

// Check implements connectors.Checker: the bucket answers in the region used (a bucket in another
// region names the region to set), the prefix can be listed and an object read with these
// credentials, and archived objects among the first 1,000 listed are counted: a warning, with
// restore off, as they are skipped.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	where := fmt.Sprintf("s3://%s/%s", s.cfg.Bucket, s.cfg.Prefix)
	client, err := s.api(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.cfg.Bucket)}); err != nil {
		var re *regionError
		if errors.As(s.wrongRegion(err), &re) {
			return nil, connectors.NeedsSetup(re, re.fix())
		}
		return nil, fmt.Errorf("bucket %s: not reachable with these credentials (s3:ListBucket needed): %w", s.cfg.Bucket, err)
	}
	region := "region " + client.Options().Region
	s.mu.Lock()
	if s.named {
		region += ", as S3 names it"
	}
	s.mu.Unlock()
	out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(s.cfg.Prefix), MaxKeys: aws.Int32(1000)})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w (s3:ListBucket needed)", where, s.wrongRegion(err))
	}
	lines := []string{"bucket " + s.cfg.Bucket + " reachable (" + region + ")", "listing " + where + " allowed"}
	objs, archivedN := s.archivedAmong(ctx, client, out.Contents)
	if len(objs) > 0 {
		if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(objs[0])}); err != nil {
			return lines, fmt.Errorf("read %s: %w (s3:GetObject needed)", objs[0], err)
		}
		lines = append(lines, "reading objects allowed ("+objs[0]+")")
	}
	archivedLine := fmt.Sprintf("%d of the first %d objects under %s are archived (GLACIER, DEEP_ARCHIVE or an Intelligent-Tiering archive tier)",
		archivedN, len(out.Contents), where)
	switch {
	case s.cfg.Restore:
		lines = append(lines, fmt.Sprintf("restore is on: archived objects are restored (%s tier, %d day(s)) and taken once restored; s3:RestoreObject is needed (not tried)",
			restoreTier(s.cfg.RestoreTier), s.cfg.RestoreDays))
		if archivedN > 0 {
			lines = append(lines, archivedLine+": they are restored first")
		}
	case archivedN > 0:
		lines = append(lines, connectors.Warning(archivedLine+": S3 refuses to read them until restored, so they are skipped",
			"set restore: true on the source to have the bridge restore each and take it once restored (s3:RestoreObject needed; AWS bills retrievals), or copy them to a readable storage class"))
	}
	if s.cfg.DeleteAfter {
		lines = append(lines, "delete_after is on: s3:DeleteObject is needed once transcripts are done (not tried)")
	}
	return lines, nil
}

// archivedAmong returns the keys of the wanted listed objects that can be read now (a GLACIER or
// DEEP_ARCHIVE object counts as archived, an Intelligent-Tiering one as its HEAD says, for the
// first checkHeads of them), and how many are archived.
func (s *Source) archivedAmong(ctx context.Context, client *s3.Client, listed []types.Object) (keys []string, archivedN int) {
	heads := 0
	for _, o := range listed {
		obj := object{key: aws.ToString(o.Key), size: aws.ToInt64(o.Size), class: o.StorageClass}
		if !s.wanted(obj) {
			continue
		}
		var head *s3.HeadObjectOutput
		if obj.class == types.ObjectStorageClassIntelligentTiering && heads < checkHeads {
			heads++
			head, _ = client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(obj.key)})
		}
		if stateOf(obj.class, head) == readable {
			keys = append(keys, obj.key)
		} else {
			archivedN++
		}
	}
	return keys, archivedN
}
