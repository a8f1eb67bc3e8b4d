package bridge

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ErrNoSpace is what a write fails with when the file system it writes to is full (ENOSPC), over
// its quota (EDQUOT) or past the process's file size limit (EFBIG, RLIMIT_FSIZE): errors.Is(err,
// ErrNoSpace) holds for a *NoSpaceError.
var ErrNoSpace = errors.New("no space left on device")

// NoSpaceError is a write refused for want of space, naming the file or folder it was for (the
// store's database file, an inbox, an export's destination).
type NoSpaceError struct {
	// Path is the file or folder the write was for.
	Path string
	// Err is the system's or the driver's error.
	Err error
}

// Error says what is full, and what the bridge does about it.
func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("no space left for %s (%v): the bridge takes no new work until space is freed there", e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *NoSpaceError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNoSpace.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

// NoSpace returns err as a *NoSpaceError naming path when it is a system's refusal for want of
// space (ENOSPC, EDQUOT, EFBIG), else err unchanged (nil stays nil). A *NoSpaceError already is
// returned as it is.
func NoSpace(path string, err error) error {
	if err == nil || errors.Is(err, ErrNoSpace) {
		return err
	}
	if IsNoSpaceErrno(err) {
		return &NoSpaceError{Path: path, Err: err}
	}
	return err
}

// IsNoSpaceErrno reports whether err wraps ENOSPC, EDQUOT or EFBIG.
func IsNoSpaceErrno(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// spaceWatch tracks whether the pipeline's writes are refused for want of space: one ERROR when
// an outage begins, one INFO when a write succeeds again, nothing in between.
type spaceWatch struct {
	mu    sync.Mutex
	full  *NoSpaceError
	since time.Time
}

// DiskFull returns the error of the write refused for want of space since which the pipeline
// takes no new work, or nil when its last write succeeded (or none was refused).
func (p *Pipeline) DiskFull() error {
	p.space.mu.Lock()
	defer p.space.mu.Unlock()
	if p.space.full == nil {
		return nil
	}
	return p.space.full
}

// noSpace reports whether err is a write refused for want of space, and notes it: the first of
// an outage is logged at ERROR with the path, the rest at DEBUG.
func (p *Pipeline) noSpace(err error) bool {
	var ns *NoSpaceError
	if !errors.As(err, &ns) {
		return false
	}
	p.space.mu.Lock()
	first := p.space.full == nil
	if first {
		p.space.full, p.space.since = ns, time.Now()
	}
	p.space.mu.Unlock()
	if first {
		p.log().Error("disk full: new work waits until space is freed; the bridge tries again by itself", "path", ns.Path, "error", err)
	} else {
		p.log().Debug("disk still full", "path", ns.Path, "error", err)
	}
	return true
}

// spaceAgain notes a write that succeeded: an outage noted by noSpace ends, logged once.
func (p *Pipeline) spaceAgain() {
	p.space.mu.Lock()
	full, since := p.space.full, p.space.since
	p.space.full = nil
	p.space.mu.Unlock()
	if full != nil {
		p.log().Info("space freed: the bridge takes new work again", "path", full.Path, "full_for", time.Since(since).Round(time.Millisecond))
	}
}
