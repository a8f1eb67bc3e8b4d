//go:build !unix

package localdir

import "io/fs"

// FieldFileID is the Recording field holding the identity of the file found; this system gives
// none, so Open and Finish rely on the link checks and the version.
const FieldFileID = "file_id"

func fileID(fs.FileInfo) string { return "" }
