package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// uploadSlots counts uploads whose body is being received, per key and per workspace.
type uploadSlots struct {
	mu    sync.Mutex
	byKey map[string]int
	byWS  map[string]int
}

func newUploadSlots() *uploadSlots {
	return &uploadSlots{byKey: map[string]int{}, byWS: map[string]int{}}
}

func (u *uploadSlots) acquire(key, ws string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byKey[key] >= maxUploadsPerKey || u.byWS[ws] >= maxUploadsPerWS {
		return false
	}
	u.byKey[key]++
	u.byWS[ws]++
	return true
}

func (u *uploadSlots) release(key, ws string) {
	u.mu.Lock()
	u.byKey[key]--
	u.byWS[ws]--
	u.mu.Unlock()
}

// receiveBody streams the body to a temporary file, hashing it on the way. A stall longer than
// StallTimeout or an upload longer than UploadTimeout ends with a timeout error.
func (s *Server) receiveBody(w http.ResponseWriter, r *http.Request, u *uploadRequest) (path, digest string, n int64, err error) {
	f, err := os.CreateTemp(s.opts.MediaDir, "sandbox-upload-*."+u.ext)
	if err != nil {
		return "", "", 0, fmt.Errorf("create media file: %w", err)
	}
	defer f.Close()
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(s.opts.UploadTimeout)
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for n < u.length {
		next := time.Now().Add(s.opts.StallTimeout)
		if next.After(deadline) {
			next = deadline
		}
		_ = rc.SetReadDeadline(next) // unsupported writers (tests) simply get no stall detection
		m, rerr := r.Body.Read(buf)
		if m > 0 {
			if _, werr := f.Write(buf[:m]); werr != nil {
				return f.Name(), "", n, fmt.Errorf("write media file: %w", werr)
			}
			h.Write(buf[:m])
			n += int64(m)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return f.Name(), "", n, rerr
		}
	}
	_ = rc.SetReadDeadline(time.Time{})
	if n < u.length {
		return f.Name(), "", n, io.ErrUnexpectedEOF
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), n, nil
}
