package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-bridge/bridge/internal/s3client"
)

// s3dest is an S3 (or S3-compatible) prefix; an object appears only once its upload completed.
type s3dest struct {
	client         *s3.Client
	bucket, prefix string
}

var _ Destination = (*s3dest)(nil)

func openS3(ctx context.Context, c S3Config, rest string) (*s3dest, error) {
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return nil, fmt.Errorf("destination s3://%s: no bucket", rest)
	}
	var secret string
	if c.AccessKeyID != "" {
		b, err := os.ReadFile(c.SecretAccessKeyFile)
		if err != nil {
			return nil, fmt.Errorf("s3.secret_access_key_file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	client, err := s3client.New(ctx, s3client.Options{Region: c.Region, Endpoint: c.Endpoint, PathStyle: c.PathStyle,
		AccessKeyID: c.AccessKeyID, SecretAccessKey: secret})
	if err != nil {
		return nil, err
	}
	return &s3dest{client: client, bucket: bucket, prefix: strings.Trim(prefix, "/")}, nil
}

// String implements Destination.
func (d *s3dest) String() string { return "s3://" + d.bucket + "/" + d.prefix }

func (d *s3dest) key(name string) string { return path.Join(d.prefix, name) }

// Temp implements Destination.
func (d *s3dest) Temp() (*os.File, error) { return os.CreateTemp("", "bridge-export-*") }

// Commit uploads f (streamed from disk, its size as the length) and removes it.
func (d *s3dest) Commit(ctx context.Context, f, name string) error {
	defer os.Remove(f)
	h, err := os.Open(f)
	if err != nil {
		return err
	}
	defer h.Close()
	st, err := h.Stat()
	if err != nil {
		return err
	}
	if _, err := d.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(d.key(name)),
		Body: h, ContentLength: aws.Int64(st.Size())}); err != nil {
		return fmt.Errorf("upload %s/%s: %w", d, name, err)
	}
	return nil
}

// Read implements Destination.
func (d *s3dest) Read(ctx context.Context, name string) ([]byte, error) {
	out, err := d.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(d.key(name))})
	if err != nil {
		var nk *types.NoSuchKey
		if errors.As(err, &nk) {
			return nil, fmt.Errorf("%s/%s: %w", d, name, os.ErrNotExist)
		}
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(io.LimitReader(out.Body, 16<<20))
}

// Exists implements Destination.
func (d *s3dest) Exists(ctx context.Context, name string) (bool, error) {
	_, err := d.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(d.key(name))})
	var nf *types.NotFound
	var re interface{ HTTPStatusCode() int }
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nf), errors.As(err, &re) && re.HTTPStatusCode() == 404:
		return false, nil
	}
	return false, err
}

// Remove implements Destination.
func (d *s3dest) Remove(ctx context.Context, names []string) error {
	for _, n := range names {
		if _, err := d.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(d.key(n))}); err != nil {
			return fmt.Errorf("delete %s/%s: %w", d, n, err)
		}
	}
	return nil
}

// Prune implements Destination.
func (d *s3dest) Prune(context.Context, string, int) error { return nil }
