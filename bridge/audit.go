package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AuditEntry is one action an admin took by hand (the status page's release, reassign, replay,
// pause, resume, sign-in and sign-out): who, what, when, on which ids, and how it went.
type AuditEntry struct {
	// ID orders the entries; the store sets it when it writes one (Audit ignores it).
	ID int64 `json:"id"`
	// At is when the action was taken.
	At time.Time `json:"at"`
	// Who took it: "admin" and the session's tag, or the remote address when the page runs
	// without a token ("admin session 1a2b3c4d", "admin from 127.0.0.1").
	Who string `json:"who"`
	// Action is what was done: release, reassign, replay, pause, resume, login, logout.
	Action string `json:"action"`
	// Targets are the ids acted on: job ids, delivery ids, an endpoint's name.
	Targets []string `json:"targets"`
	// Detail says more: the author given, the replay's filter and how many it changed.
	Detail string `json:"detail,omitempty"`
	// Error is why the action failed (empty when it succeeded).
	Error string `json:"error,omitempty"`
}

// ErrAuditEntry is returned by AuditStore.Audit for an entry missing who, what or when.
var ErrAuditEntry = errors.New("an audit entry needs who, action and at")

// Validate returns an error wrapping ErrAuditEntry, naming the field, when e has no Who, no
// Action or no At; nil otherwise.
func (e AuditEntry) Validate() error {
	switch {
	case e.Who == "":
		return fmt.Errorf("who is empty: %w", ErrAuditEntry)
	case e.Action == "":
		return fmt.Errorf("action is empty: %w", ErrAuditEntry)
	case e.At.IsZero():
		return fmt.Errorf("at is zero: %w", ErrAuditEntry)
	}
	return nil
}

// AuditStore keeps the audit log: what admins did by hand, for as long as the store lives.
type AuditStore interface {
	// Audit appends e to the log, with a new ID above every earlier one. It fails with an
	// error wrapping ErrAuditEntry when e does not validate, and when the store cannot write.
	Audit(ctx context.Context, e AuditEntry) error
	// AuditLog returns the latest limit entries (every one when limit ≤ 0), newest first (in
	// the order they were written, not by At); Targets is never nil. It fails when the store
	// cannot be read.
	AuditLog(ctx context.Context, limit int) ([]AuditEntry, error)
}
