package gdrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors"
)

// Reader reads Drive files by id as the users it impersonates, as a gdrive source reads what it
// lists: the same fields, versions, owners, DedupeKey, retries and classification of failures.
// The meet source describes and downloads with it the recordings Meet names by their Drive file
// id, so that a recording reached through both sources is the same item.
type Reader struct {
	src *Source
}

// Errors Reader.File's error wraps.
var (
	// ErrUnreadable: Drive answers 404, the file does not exist (deleted for good) or the user
	// cannot read it.
	ErrUnreadable = errors.New("not readable")
	// ErrTrashed: the file is in the trash (its owner threw it away).
	ErrTrashed = errors.New("in the trash")
)

// NewReader builds a Reader for cfg's subjects and subject (its folder options are not used;
// credentials_file must be a service-account key or authorized_user file as for the source).
// Nothing is called until File.
func NewReader(ctx context.Context, cfg Config) (*Reader, error) {
	cfg.SetDefaults()
	if cfg.MaxAttempts < 0 {
		return nil, fmt.Errorf("max attempts %d is negative", cfg.MaxAttempts)
	}
	if err := cfg.readCredentials(); err != nil {
		return nil, err
	}
	s, err := build(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Reader{src: s}, nil
}

// File describes Drive file id as subject reads it (subject must be one of the Reader's): the
// recording a gdrive source would list for it. The error wraps ErrUnreadable when subject cannot
// read it (Drive's 404), ErrTrashed when it is in the trash.
func (r *Reader) File(ctx context.Context, subject, id string) (connectors.Recording, error) {
	svc := r.src.users[subject]
	if svc == nil {
		return connectors.Recording{}, fmt.Errorf("drive file %s: %q is not a subject of this reader", id, subject)
	}
	var f *drive.File
	err := r.src.retry(ctx, func() (err error) {
		f, err = svc.Files.Get(id).SupportsAllDrives(true).Fields(fileFields).Context(ctx).Do()
		return err
	})
	switch {
	case status(err) == http.StatusNotFound:
		return connectors.Recording{}, fmt.Errorf("drive file %s: %w to %s: %w", id, ErrUnreadable, subject, err)
	case err != nil:
		return connectors.Recording{}, fmt.Errorf("drive file %s: %w", id, err)
	case f.Trashed:
		return connectors.Recording{}, fmt.Errorf("drive file %s: %w", id, ErrTrashed)
	}
	return recording(f, subject), nil
}

// Open downloads a recording File described, as the gdrive source does (Source.Open).
func (r *Reader) Open(ctx context.Context, rec connectors.Recording) (io.ReadCloser, error) {
	return r.src.Open(ctx, rec)
}

// SignedIn returns the e-mail address Drive knows subject's token as (about.get), for a Check.
func (r *Reader) SignedIn(ctx context.Context, subject string) (string, error) {
	svc := r.src.users[subject]
	if svc == nil {
		return "", fmt.Errorf("%q is not a subject of this reader", subject)
	}
	about, err := svc.About.Get().Fields("user(emailAddress)").Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("drive about.get: %w", err)
	}
	return about.User.EmailAddress, nil
}
