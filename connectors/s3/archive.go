package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Archived objects. An object in GLACIER (Glacier Flexible Retrieval), DEEP_ARCHIVE or an
// Intelligent-Tiering archive tier is listed like any other, but GetObject refuses it with 403
// InvalidObjectState until a restore (RestoreObject) has completed
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/archived-objects.html). ListObjectsV2
// gives the storage class; only HeadObject tells an Intelligent-Tiering object's tier
// (x-amz-archive-status) and a restore's progress (x-amz-restore), so such objects are read with
// HEAD when new.
//
// Without restore, an archived object is handed over with Unavailable set, so the bridge records
// its job skipped with the reason, under a version of its own (its ETag + archivedVersion): the
// same object readable later (copied to another class, or restored once restore is turned on) is
// a new job. The cursor keeps it with archivedSum so it is not handed over again. With restore,
// the source asks S3 to restore it and hands it over once HeadObject says the restore is
// complete; until then it stays out of the cursor and is listed (and HEAD read) again each scan.

// archivedVersion ends the version of an archived object handed over to be skipped.
const archivedVersion = "@archived"

// archivedSum is what the cursor keeps of an object handed over archived, to be skipped.
func archivedSum(etag string) string { return etagSum(etag + archivedVersion) }

// mayBeArchived reports whether an object listed in class may need a restore before it is read:
// GLACIER and DEEP_ARCHIVE always do (GLACIER_IR does not), INTELLIGENT_TIERING when HeadObject
// says it is in an archive tier.
func mayBeArchived(class types.ObjectStorageClass) bool {
	switch class {
	case types.ObjectStorageClassGlacier, types.ObjectStorageClassDeepArchive, types.ObjectStorageClassIntelligentTiering:
		return true
	}
	return false
}

// storage is whether an object can be read now.
type storage int

const (
	readable  storage = iota // GetObject serves it
	archived                 // archived, with no restore
	restoring                // a restore is ongoing
)

// stateOf is the storage state of an object listed in class, from its HEAD when read (nil: not
// read; a GLACIER or DEEP_ARCHIVE object is then taken as archived). HeadObject
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html): x-amz-restore is
// ongoing-request="true" while a restore runs, ongoing-request="false", expiry-date="…" once a
// copy is readable; x-amz-archive-status (ARCHIVE_ACCESS, DEEP_ARCHIVE_ACCESS) is set while an
// Intelligent-Tiering object is in an archive tier, which it leaves once restored.
func stateOf(class types.ObjectStorageClass, head *s3.HeadObjectOutput) storage {
	switch {
	case !mayBeArchived(class):
		return readable
	case head == nil:
		if class == types.ObjectStorageClassIntelligentTiering {
			return readable
		}
		return archived
	}
	restore := aws.ToString(head.Restore)
	switch {
	case strings.Contains(restore, `ongoing-request="false"`):
		return readable
	case class == types.ObjectStorageClassIntelligentTiering && head.ArchiveStatus == "":
		return readable
	case strings.Contains(restore, `ongoing-request="true"`):
		return restoring
	}
	return archived
}

// where names an object's storage class, and its Intelligent-Tiering tier when archived there.
func where(class string, tier types.ArchiveStatus) string {
	if tier != "" {
		return class + " (" + string(tier) + " tier)"
	}
	return class
}

// archivedReason is why an archived object is skipped, and what would take it.
func (s *Source) archivedReason(key, class string, tier types.ArchiveStatus) string {
	return fmt.Sprintf("archived: s3://%s/%s is in %s, which S3 refuses to read until it is restored "+
		"(set restore: true on the source to have the bridge restore it and take it, or copy it to a readable storage class)",
		s.cfg.Bucket, key, where(class, tier))
}

// requestRestore asks S3 to restore an archived object (RestoreObject,
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_RestoreObject.html) for restore_days at
// restore_tier; a restore already in progress (409 RestoreAlreadyInProgress) is not an error.
// Days is given for GLACIER and DEEP_ARCHIVE only: Intelligent-Tiering objects "are not subject to
// restore expiry, so specifying ExpirationInDays results in restore request failure"
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_control_S3InitiateRestoreObjectOperation.html).
// Expedited "is not available for objects stored in the S3 Glacier Deep Archive storage class or
// S3 Intelligent-Tiering Deep Archive tier": those are restored at Standard. It returns the
// tier asked for.
func (s *Source) requestRestore(ctx context.Context, client *s3.Client, key, class string, tier types.ArchiveStatus) (types.Tier, error) {
	t := restoreTier(s.cfg.RestoreTier)
	if t == types.TierExpedited && (class == string(types.StorageClassDeepArchive) || tier == types.ArchiveStatusDeepArchiveAccess) {
		t = types.TierStandard
	}
	req := &types.RestoreRequest{GlacierJobParameters: &types.GlacierJobParameters{Tier: t}}
	if class != string(types.StorageClassIntelligentTiering) {
		req.Days = aws.Int32(int32(s.cfg.RestoreDays))
	}
	_, err := client.RestoreObject(ctx, &s3.RestoreObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key), RestoreRequest: req})
	var ae smithy.APIError
	if err != nil && !(errors.As(err, &ae) && ae.ErrorCode() == "RestoreAlreadyInProgress") {
		return t, fmt.Errorf("restore s3://%s/%s: %w (s3:RestoreObject needed)", s.cfg.Bucket, key, s.wrongRegion(err))
	}
	return t, nil
}

// restoreWait is how long a job waits for a restore between tries: about the tier's quickest
// restores ("typically made available within 1–5 minutes", "within 3–5 hours", "within 5–12
// hours" from GLACIER, API_RestoreObject.html).
func restoreWait(t types.Tier) time.Duration {
	switch t {
	case types.TierExpedited:
		return 5 * time.Minute
	case types.TierBulk:
		return 5 * time.Hour
	}
	return 3 * time.Hour
}

// isInvalidObjectState reports whether err is GetObject's refusal of an archived object.
func isInvalidObjectState(err error) bool {
	var ios *types.InvalidObjectState
	var ae smithy.APIError
	return errors.As(err, &ios) || errors.As(err, &ae) && ae.ErrorCode() == "InvalidObjectState"
}
