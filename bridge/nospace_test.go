package bridge_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestNoSpace: a refusal for want of space (a full disk, a quota, RLIMIT_FSIZE's EFBIG), however
// wrapped, becomes a NoSpaceError naming the path; anything else is returned as it is.
func TestNoSpace(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Path: "/data/bridge.db-wal", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("store: %w", syscall.EDQUOT), true},
		{&fs.PathError{Op: "write", Path: "/data/x", Err: syscall.EFBIG}, true},
		{&bridge.NoSpaceError{Path: "/data/bridge.db", Err: syscall.ENOSPC}, true},
		{syscall.EIO, false},
		{errors.New("no space left on device"), false}, // words are not an errno
		{nil, false},
	}
	for _, tc := range tests {
		got := bridge.NoSpace("/data/bridge.db", tc.err)
		if is := errors.Is(got, bridge.ErrNoSpace); is != tc.want {
			t.Errorf("NoSpace(%q) = %v, want a NoSpaceError %v", tc.err, got, tc.want)
		}
		if tc.want && !strings.Contains(got.Error(), "/data/bridge.db") {
			t.Errorf("NoSpace(%q) = %v, want it to name /data/bridge.db", tc.err, got)
		}
		if !tc.want && got != tc.err {
			t.Errorf("NoSpace(%q) = %v, want it unchanged", tc.err, got)
		}
	}
}
