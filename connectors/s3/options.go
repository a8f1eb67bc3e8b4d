package s3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("s3", func(_ string, cfg Config) (connectors.Source, error) {
		return New(context.Background(), cfg)
	})
}

// Config configures an S3 source. Its fields tagged koanf are the options of a source with
// type: s3.
type Config struct {
	// Bucket is the bucket to watch.
	Bucket string `koanf:"bucket"`
	// Prefix limits the listing to keys beginning with it ("calls/").
	Prefix string `koanf:"prefix"`
	// Region is the bucket's region. Unset, the bridge asks S3 for it (an unsigned HeadBucket,
	// answered with x-amz-bucket-region) before its first call, and uses the AWS chain's region,
	// else us-east-1, when the server names none (most S3-compatible servers). Set, it is used as
	// is: a bucket in another region is an error naming the region to set.
	Region string `koanf:"region"`
	// Endpoint is the API base URL of an S3-compatible server (MinIO, versitygw, R2); empty is AWS.
	Endpoint string `koanf:"endpoint"`
	// PathStyle addresses buckets as endpoint/bucket/key (most S3-compatible servers need it).
	PathStyle bool `koanf:"path_style"`
	// Include keeps only objects whose key below prefix, or its base name, matches one of these
	// globs (path.Match syntax); empty keeps all.
	Include connectors.Globs `koanf:"include"`
	// Exclude drops objects matching any of these globs.
	Exclude connectors.Globs `koanf:"exclude"`
	// MinSize is the smallest object size taken, in bytes (0: no bound).
	MinSize int64 `koanf:"min_size"`
	// MaxSize is the largest object size taken, in bytes (0: no bound).
	MaxSize int64 `koanf:"max_size"`
	// OwnerFrom names where the owner comes from: "meta:<name>" (the x-amz-meta-<name> header)
	// or "key:<regexp>" (the first group matched in the key); empty: no owner.
	OwnerFrom string `koanf:"owner_from"`
	// DeleteAfter deletes an object once its transcript is done (never before, never on failure).
	DeleteAfter bool `koanf:"delete_after"`
	// AccessKeyID is a static access key, with secret_access_key_file; empty uses the standard
	// AWS chain (environment, shared files, SSO, instance roles).
	AccessKeyID string `koanf:"access_key_id"`
	// SecretAccessKeyFile holds the secret of access_key_id.
	SecretAccessKeyFile string `koanf:"secret_access_key_file"`
	// SecretAccessKey is the secret of AccessKeyID; when empty, New reads it from
	// SecretAccessKeyFile.
	SecretAccessKey string
	// UserMetadata reads each new object's x-amz-meta-* with one HEAD request, for templates
	// (.Fields); owner_from: meta:<name> turns it on too. Off, discovery is list-only, but for
	// new objects whose storage class needs a HEAD: INTELLIGENT_TIERING (to tell an archive
	// tier), and, with restore, archived ones (to follow the restore).
	UserMetadata bool `koanf:"user_metadata"`
	// HeadConcurrency bounds the HEAD requests in flight during discovery (default 16).
	HeadConcurrency int `koanf:"head_concurrency"`
	// Restore has archived objects restored before they are taken: an object in GLACIER,
	// DEEP_ARCHIVE or an Intelligent-Tiering archive tier, which S3 refuses to read until
	// restored, is restored with RestoreObject (s3:RestoreObject; AWS bills retrievals) and taken
	// once HeadObject says its restore is complete (hours; it is listed again until then). Off,
	// such objects are skipped at discovery with the reason.
	Restore bool `koanf:"restore"`
	// RestoreDays is how many days a restored copy of a GLACIER or DEEP_ARCHIVE object stays
	// readable (default 1); an Intelligent-Tiering object moves back to its Frequent Access tier
	// instead.
	RestoreDays int `koanf:"restore_days"`
	// RestoreTier is the retrieval tier of restores: Standard (default: 3–5 hours, 12 from
	// DEEP_ARCHIVE), Bulk (cheaper: 5–12 hours, 48 from DEEP_ARCHIVE) or Expedited (1–5 minutes,
	// costlier; not available from DEEP_ARCHIVE or the Deep Archive Access tier, which use
	// Standard).
	RestoreTier string `koanf:"restore_tier"`

	ownerMeta string
	ownerKey  *regexp.Regexp
}

// SetDefaults fills in the defaults of unset fields.
func (c *Config) SetDefaults() {
	if c.HeadConcurrency == 0 {
		c.HeadConcurrency = 16
	}
	if c.RestoreDays == 0 {
		c.RestoreDays = 1
	}
	if c.RestoreTier == "" {
		c.RestoreTier = string(types.TierStandard)
	}
}

// Validate returns an *connectors.OptionError naming the first option at fault, or nil.
func (c *Config) Validate() error {
	hasSecret := c.SecretAccessKey != "" || c.SecretAccessKeyFile != ""
	switch {
	case c.Bucket == "":
		return connectors.Required("bucket", c.Bucket)
	case c.MinSize < 0 || c.MaxSize < 0 || (c.MaxSize > 0 && c.MaxSize < c.MinSize):
		return &connectors.OptionError{Key: "max_size", Err: fmt.Errorf("%d and min_size %d do not make a range", c.MaxSize, c.MinSize)}
	case (c.AccessKeyID != "") != hasSecret:
		return &connectors.OptionError{Key: "access_key_id", Err: errors.New("needs secret_access_key_file too (or neither, for the AWS chain)")}
	case c.HeadConcurrency < 1:
		return &connectors.OptionError{Key: "head_concurrency", Err: fmt.Errorf("%d: at least 1", c.HeadConcurrency)}
	case c.RestoreDays < 1:
		return &connectors.OptionError{Key: "restore_days", Err: fmt.Errorf("%d: at least 1", c.RestoreDays)}
	case restoreTier(c.RestoreTier) == "":
		return &connectors.OptionError{Key: "restore_tier", Err: fmt.Errorf("%q is not Standard, Bulk or Expedited", c.RestoreTier)}
	}
	if err := c.Include.CheckOption("include"); err != nil {
		return err
	}
	if err := c.Exclude.CheckOption("exclude"); err != nil {
		return err
	}
	_, _, err := c.owner()
	return err
}

// restoreTier is the retrieval tier named by name (in any case), "" when it names none.
func restoreTier(name string) types.Tier {
	for _, t := range []types.Tier{types.TierStandard, types.TierBulk, types.TierExpedited} {
		if strings.EqualFold(name, string(t)) {
			return t
		}
	}
	return ""
}

// owner compiles owner_from: the metadata name, or the key's regexp; the error is an
// *connectors.OptionError naming owner_from.
func (c *Config) owner() (meta string, key *regexp.Regexp, err error) {
	fail := func(err error) (string, *regexp.Regexp, error) {
		return "", nil, &connectors.OptionError{Key: "owner_from", Err: err}
	}
	switch kind, arg, _ := strings.Cut(c.OwnerFrom, ":"); {
	case c.OwnerFrom == "":
	case kind == "meta" && arg != "":
		meta = strings.ToLower(arg)
	case kind == "key" && arg != "":
		re, err := regexp.Compile(arg)
		if err != nil {
			return fail(err)
		}
		if re.NumSubexp() < 1 {
			return fail(fmt.Errorf("%q has no (group) naming the owner", arg))
		}
		key = re
	default:
		return fail(fmt.Errorf("%q is not meta:<name> or key:<regexp>", c.OwnerFrom))
	}
	return meta, key, nil
}

// readSecret reads secret_access_key_file into SecretAccessKey; the error is an
// *connectors.OptionError naming it.
func (c *Config) readSecret() error {
	if c.SecretAccessKeyFile == "" || c.SecretAccessKey != "" {
		return nil
	}
	b, err := os.ReadFile(c.SecretAccessKeyFile)
	if err != nil {
		return &connectors.OptionError{Key: "secret_access_key_file", Err: err}
	}
	c.SecretAccessKey = strings.TrimSpace(string(b))
	return nil
}
