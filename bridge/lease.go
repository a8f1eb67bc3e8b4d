package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Leases of several replicas on one store: one replica at a time scans a source (and moves its
// cursor) and tracks completions; an upload is held by whoever claimed its job until its lease
// (the job's NextAt while uploading) runs out. A replica that dies is taken over once its leases
// have run out, after Pipeline.Lease at most.

// DefaultLease is how long a claim lasts without renewal when Pipeline.Lease is zero.
const DefaultLease = 30 * time.Second

// trackerLease names the lease of the replica that tracks completions and requests reports.
const trackerLease = "tracker"

// sourceLease names the lease of the replica scanning source.
func sourceLease(source string) string { return "source:" + source }

// errLeaseLost ends work whose lease another replica took over.
var errLeaseLost = errors.New("lease lost to another replica")

// DefaultReplica returns a name for this process among replicas: host, process id and a random
// suffix (a restarted process is a new replica).
func DefaultReplica() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// lead takes or renews the lease name and reports whether this replica holds it; a store error
// is logged and counts as not holding it.
func (p *Pipeline) lead(ctx context.Context, name string) bool {
	ok, err := p.Store.Lease(ctx, name, p.Replica, p.now(), p.Lease)
	if err != nil {
		if ctx.Err() == nil && !p.noSpace(err) {
			p.log().Warn("lease", "lease", name, "error", err)
		}
		return false
	}
	if ok {
		p.spaceAgain() // a lease taken or renewed is a write that went through
	}
	return ok
}

// resign gives up the lease name, if held, so another replica takes it at once.
func (p *Pipeline) resign(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Store.Release(ctx, name, p.Replica); err != nil {
		p.log().Warn("release lease", "lease", name, "error", err)
	}
}

// withLease runs fn while this replica holds the lease name, renewing it every third of
// Pipeline.Lease, and gives it up afterwards. It reports false without running fn when another
// replica holds the lease. fn's context ends when a renewal is refused (the lease was lost).
func (p *Pipeline) withLease(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	if !p.lead(ctx, name) {
		return false, nil
	}
	defer p.resign(name)
	return true, p.keep(ctx, fn, func(ctx context.Context) error {
		if !p.lead(ctx, name) {
			return errLeaseLost
		}
		return nil
	})
}

// keep runs fn, calling renew every third of Pipeline.Lease until fn returns; when renew fails
// with errLeaseLost, fn's context is cancelled and keep returns an error wrapping errLeaseLost.
// Other renewal errors are logged and tried again at the next tick.
func (p *Pipeline) keep(ctx context.Context, fn, renew func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(p.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := renew(ctx)
			switch {
			case errors.Is(err, errLeaseLost):
				cancel(errLeaseLost)
				return
			case err != nil && ctx.Err() == nil:
				p.log().Warn("renew lease", "error", err)
			}
		}
	}()
	err := fn(ctx)
	close(done)
	<-stopped
	if errors.Is(context.Cause(ctx), errLeaseLost) {
		return fmt.Errorf("%w (%v)", errLeaseLost, err)
	}
	return err
}

// ignoreConflict drops ErrConflict: another worker or replica moved the job first and carries
// it on.
func ignoreConflict(err error) error {
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// renewUpload returns the renewal of an upload's lease: the job moved on by Lease, in place,
// from the revision the attempt holds (updated in *revision); ErrConflict means another replica
// took the job over.
func (p *Pipeline) renewUpload(held Job, revision *int64) func(ctx context.Context) error {
	var mu sync.Mutex
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		held.Revision = *revision
		held.NextAt = p.now().Add(p.Lease)
		held.UpdatedAt = p.now()
		err := p.Store.Update(ctx, &held, StateUploading, "")
		if errors.Is(err, ErrConflict) {
			return errLeaseLost
		}
		if err == nil {
			*revision = held.Revision
		}
		return err
	}
}
