package s3

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/transcript-bridge/bridge/connectors"
)

// Config configures an S3 source.
type Config struct {
	// Bucket is the bucket to watch (required).
	Bucket string
	// Prefix limits the listing to keys beginning with it ("calls/").
	Prefix string
	// Region is the bucket's region (default: the AWS chain's, else us-east-1).
	Region string
	// Endpoint is the API base URL of an S3-compatible server (MinIO, versitygw, R2); empty is AWS.
	Endpoint string
	// PathStyle addresses buckets as endpoint/bucket/key (most S3-compatible servers need it).
	PathStyle bool
	// Include and Exclude are globs matched against the key below Prefix and its base name.
	Include, Exclude connectors.Globs
	// MinSize and MaxSize bound the object sizes taken (0: no bound).
	MinSize, MaxSize int64
	// OwnerFrom names where the owner comes from: "meta:<name>" (the x-amz-meta-<name> header)
	// or "key:<regexp>" (the first group matched in the key); empty: no owner.
	OwnerFrom string
	// DeleteAfter deletes an object once its transcript is done (never before, never on failure).
	DeleteAfter bool
	// AccessKeyID and SecretAccessKey are static credentials; empty uses the standard AWS
	// chain (environment, shared files, SSO, instance roles).
	AccessKeyID, SecretAccessKey string
	// HeadConcurrency bounds the parallel HEAD requests that read new objects' metadata
	// (default 8).
	HeadConcurrency int

	ownerMeta string
	ownerKey  *regexp.Regexp
}

// parseOptions reads a source's options; errors name the option.
func parseOptions(opts map[string]any) (Config, error) {
	o := connectors.NewOptions(opts)
	o.Required("bucket")
	c := Config{
		Bucket:      o.String("bucket", ""),
		Prefix:      o.String("prefix", ""),
		Region:      o.String("region", ""),
		Endpoint:    o.String("endpoint", ""),
		PathStyle:   o.Bool("path_style", false),
		Include:     o.Globs("include"),
		Exclude:     o.Globs("exclude"),
		MinSize:     o.Int("min_size", 0),
		MaxSize:     o.Int("max_size", 0),
		OwnerFrom:   o.String("owner_from", ""),
		DeleteAfter: o.Bool("delete_after", false),
		AccessKeyID: o.String("access_key_id", ""),
	}
	secretFile := o.String("secret_access_key_file", "")
	if err := o.Err("s3"); err != nil {
		return c, err
	}
	if secretFile != "" {
		b, err := os.ReadFile(secretFile)
		if err != nil {
			return c, fmt.Errorf("option secret_access_key_file: %w", err)
		}
		c.SecretAccessKey = strings.TrimSpace(string(b))
	}
	return c, c.validate()
}

// validate checks the settings and compiles owner_from.
func (c *Config) validate() error {
	switch {
	case c.Bucket == "":
		return errors.New("option bucket: required")
	case c.MinSize < 0 || c.MaxSize < 0 || (c.MaxSize > 0 && c.MaxSize < c.MinSize):
		return fmt.Errorf("option max_size: %d and min_size %d do not make a range", c.MaxSize, c.MinSize)
	case (c.AccessKeyID == "") != (c.SecretAccessKey == ""):
		return errors.New("option access_key_id: needs secret_access_key_file too (or neither, for the AWS chain)")
	}
	for _, g := range []connectors.Globs{c.Include, c.Exclude} {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("option include/exclude: %w", err)
		}
	}
	switch kind, arg, _ := strings.Cut(c.OwnerFrom, ":"); {
	case c.OwnerFrom == "":
	case kind == "meta" && arg != "":
		c.ownerMeta = strings.ToLower(arg)
	case kind == "key" && arg != "":
		re, err := regexp.Compile(arg)
		if err != nil {
			return fmt.Errorf("option owner_from: %w", err)
		}
		if re.NumSubexp() < 1 {
			return fmt.Errorf("option owner_from: %q has no (group) naming the owner", arg)
		}
		c.ownerKey = re
	default:
		return fmt.Errorf("option owner_from: %q is not meta:<name> or key:<regexp>", c.OwnerFrom)
	}
	if c.HeadConcurrency == 0 {
		c.HeadConcurrency = 8
	}
	return nil
}
