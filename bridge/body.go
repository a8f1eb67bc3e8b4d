package bridge

// The body of an upload: its first bytes checked for media, a pause point half way, a spool
// when the source does not know the size.

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/failpoint"
	"github.com/transcript-bridge/bridge/internal/media"
)

// peek reads up to n bytes of rc and returns them with a reader that yields the whole body
// again, those bytes first, and closes rc.
func peek(rc io.ReadCloser, n int) ([]byte, io.ReadCloser, error) {
	head := make([]byte, n)
	k := 0
	for k < n {
		m, err := rc.Read(head[k:])
		k += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	head = head[:k]
	return head, struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rc), rc}, nil
}

// contentError refuses a file whose first bytes cannot be audio or video (see media.Plausible).
type contentError struct {
	name string
	head []byte
}

func (e *contentError) Error() string {
	return fmt.Sprintf("%s: content of %s is not audio or video (%s)", api.CodeUnsupportedFileFormat, e.name, media.Describe(e.head))
}

// pausingReader hits the "upload-body" failpoint half way through the body.
type pausingReader struct {
	io.ReadCloser
	n, half int64
}

func (r *pausingReader) Read(b []byte) (int, error) {
	if r.n < r.half && r.n+int64(len(b)) >= r.half {
		b = b[:r.half-r.n]
	}
	n, err := r.ReadCloser.Read(b)
	r.n += int64(n)
	if r.n == r.half && n > 0 {
		failpoint.Hit("upload-body")
	}
	return n, err
}

func spool(open func() (io.ReadCloser, error)) (string, int64, error) {
	rc, err := open()
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	f, err := os.CreateTemp("", "bridge-spool-*")
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return f.Name(), n, nil
}
