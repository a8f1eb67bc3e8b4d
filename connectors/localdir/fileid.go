//go:build unix

package localdir

import (
	"fmt"
	"io/fs"
	"syscall"
)

// FieldFileID is the Recording field holding the identity of the file found (device and
// inode, "<dev>:<ino>"), which Open and Finish check so that a path swapped for another file
// (or a link to one) after discovery is never read or moved. Empty where the system gives
// none.
const FieldFileID = "file_id"

// fileID returns a file's device and inode as "<dev>:<ino>", or "" where the system gives none.
func fileID(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
