// Package s3test serves an S3 bucket on loopback for tests and benchmarks: gofakes3 on its
// bolt backend (objects on disk, not on the heap), with a latency before every request and the
// requests counted.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	bolt "go.etcd.io/bbolt"
)

// Bucket is the bucket an Fake serves.
const Bucket = "recordings"

// Fake is gofakes3 on its bolt backend (objects on disk, not on the heap), served on loopback
// with a latency before every request, counting the requests it serves.
type Fake struct {
	// URL is the server's root (path-style addressing).
	URL string
	// Backend holds the objects: put through it, no request is made (nor counted).
	Backend gofakes3.Backend
	// Lists counts the listings served; PerObject the other requests (HEAD, GET of an object).
	Lists, PerObject atomic.Int64

	db  *bolt.DB
	srv *httptest.Server
}

// Start serves Bucket, empty, from a bolt file at path, each request waiting
// latency. It fails when the file cannot be opened or the bucket created.
func Start(path string, latency time.Duration) (*Fake, error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, fmt.Errorf("s3test: %w", err)
	}
	db.NoSync = true // a scratch file: populating 100,000 objects must not wait on the disk
	f := &Fake{Backend: s3bolt.New(db), db: db}
	if err := f.Backend.CreateBucket(Bucket); err != nil {
		db.Close()
		return nil, fmt.Errorf("s3test: create bucket: %w", err)
	}
	h := gofakes3.New(f.Backend).Server()
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		if r.Method == http.MethodGet && r.URL.Query().Has("list-type") {
			f.Lists.Add(1)
		} else {
			f.PerObject.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	f.URL = f.srv.URL
	return f, nil
}

// Fill puts n small objects through the backend: calls/<ana|bo|cy>/m-<i>.wav, holding i in
// decimal, with the user metadata team=sales. It fails when a put fails or ctx ends.
func (f *Fake) Fill(ctx context.Context, n int) error {
	meta := map[string]string{"X-Amz-Meta-Team": "sales"}
	owners := []string{"ana", "bo", "cy"}
	for i := range n {
		if i%1000 == 0 && ctx.Err() != nil {
			return fmt.Errorf("s3test: fill: %w", ctx.Err())
		}
		body := []byte(strconv.Itoa(i))
		key := fmt.Sprintf("calls/%s/m-%06d.wav", owners[i%3], i)
		if _, err := f.Backend.PutObject(Bucket, key, meta, bytes.NewReader(body), int64(len(body)), nil); err != nil {
			return fmt.Errorf("s3test: fill: put %s: %w", key, err)
		}
	}
	return nil
}

// Close stops the server and closes the bolt file.
func (f *Fake) Close() {
	f.srv.Close()
	f.db.Close()
}
