package s3

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-bridge/bridge/connectors"
)

// object is one listed object, with its storage class.
type object struct {
	key, etag string
	size      int64
	modified  time.Time
	class     types.ObjectStorageClass
}

// cursorSaveInterval is how often, at most, ListPages hands over a cursor holding what it has
// listed so far: encoding the cursor takes time in the number of keys (about 0.2 s for
// 100,000), so saving it with every page would make a scan quadratic.
const cursorSaveInterval = 10 * time.Second

// List pages through the prefix and returns the objects not in the cursor, or changed since
// (ListPages, all pages at once).
func (s *Source) List(ctx context.Context, cursor string) ([]connectors.Recording, string, error) {
	var recs []connectors.Recording
	var next string
	err := s.ListPages(ctx, cursor, func(page []connectors.Recording, c string) error {
		recs, next = append(recs, page...), c
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return recs, next, nil
}

// ListPages implements connectors.PageLister: it pages through the prefix (1,000 keys a page)
// and hands over, page by page, the objects not in the cursor, or changed since. The cursor is
// the set of keys (and their ETags' hashes) listed last time, so a key arriving late (sorting
// before keys already seen, or a multipart upload completed with an old date) is never
// skipped, and an object already in it costs nothing but its line in the listing. Only when
// the configuration needs user metadata (metadata, or owner_from: meta:<name>) are new objects
// read with HEAD, head_concurrency at a time. Objects in an archive storage class are handed
// over to be skipped, or restored first (archive.go).
//
// A page with nothing new is not handed over (except the last). Each page handed over carries
// the cursor last encoded; at most every cursorSaveInterval, a page carries a new one: the
// cursor it started from with every object handed over so far added (or replaced), so a scan
// that stops midway resumes without listing again what it already handed over, and without
// skipping what it did not. The last page carries the cursor of this listing alone: keys no
// longer listed leave it.
func (s *Source) ListPages(ctx context.Context, cursor string, page func([]connectors.Recording, string) error) error {
	seen, err := decodeCursor(cursor)
	if err != nil {
		return err
	}
	// seen becomes the cursor it started from with every object handed over added; listed
	// holds the keys of this listing, to drop the others from the last cursor.
	listed := make(map[string]struct{}, len(seen))
	saved, dirty := time.Now(), false
	client, err := s.api(ctx)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	pages := s.pages(ctx, client, stop)
	defer func() {
		close(stop)
		for range pages { // the page fetched ahead, if any: not cut off midway (the SDK warns)
		}
	}()
	for lp := range pages {
		if lp.err != nil {
			return fmt.Errorf("list s3://%s/%s: %w", s.cfg.Bucket, s.cfg.Prefix, s.wrongRegion(lp.err))
		}
		var fresh []object
		for _, o := range lp.out.Contents {
			obj := object{key: aws.ToString(o.Key), etag: strings.Trim(aws.ToString(o.ETag), `"`), size: aws.ToInt64(o.Size),
				modified: aws.ToTime(o.LastModified), class: o.StorageClass}
			if !s.wanted(obj) {
				continue
			}
			listed[obj.key] = struct{}{}
			if !s.handedOver(obj, seen[obj.key]) {
				fresh = append(fresh, obj)
			}
		}
		recs := s.describe(ctx, client, fresh)
		for i, o := range fresh {
			if recs[i].rec == nil { // gone, changed or being restored: left out of the cursor, listed again
				delete(seen, o.key)
				delete(listed, o.key)
				continue
			}
			seen[o.key] = recs[i].sum
		}
		dirty = dirty || len(fresh) > 0
		switch {
		case !lp.more:
			for k := range seen {
				if _, ok := listed[k]; !ok {
					delete(seen, k)
				}
			}
			cursor = encodeCursor(seen)
		case dirty && time.Since(saved) >= s.saveEvery:
			cursor, saved, dirty = encodeCursor(seen), time.Now(), false
		case len(fresh) == 0:
			continue // nothing new to hand over, nor a cursor to save
		}
		if err := page(compact(recs), cursor); err != nil {
			return err
		}
		if !lp.more {
			return nil
		}
	}
	return fmt.Errorf("list s3://%s/%s: ended before its last page", s.cfg.Bucket, s.cfg.Prefix)
}

// handedOver reports whether an object was handed over already, by what the cursor keeps of it
// (sum): as readable, or, while restore is off and it is still in an archive class, as archived.
// An object handed over archived is examined again once restore is on, or once it is listed
// in a readable class.
func (s *Source) handedOver(o object, sum string) bool {
	return sum == etagSum(o.etag) || !s.cfg.Restore && mayBeArchived(o.class) && sum == archivedSum(o.etag)
}

// listedPage is a page of the listing, or the error that ended it; more reports that pages
// follow.
type listedPage struct {
	out  *s3.ListObjectsV2Output
	more bool
	err  error
}

// pages lists the prefix (1,000 keys a page) one page ahead of its reader: the next page is
// fetched while the reader stores the last one. The channel is closed after the last page, an
// error, or once stop is closed or ctx ends.
func (s *Source) pages(ctx context.Context, client *s3.Client, stop <-chan struct{}) <-chan listedPage {
	ch := make(chan listedPage, 1)
	go func() {
		defer close(ch)
		p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(s.cfg.Bucket),
			Prefix: aws.String(s.cfg.Prefix), MaxKeys: aws.Int32(1000)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			select {
			case ch <- listedPage{out: out, more: p.HasMorePages(), err: err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// compact returns the recordings handed over.
func compact(recs []found) []connectors.Recording {
	out := make([]connectors.Recording, 0, len(recs))
	for _, f := range recs {
		if f.rec != nil {
			out = append(out, *f.rec)
		}
	}
	return out
}
