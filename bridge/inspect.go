package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/media"
)

// Skip reasons read "<code>: <what the file is>, <what the service needs>", the code the
// service's own (api.Code*) when it has one:
//
//	file_too_small: 0 bytes, the service needs at least 1024
//	unsupported_file_format: content of a.wav is not audio or video (text: "hello")
//	file_truncated: 44144 bytes, its WAV header announces 88244
//
// Precheck (name and size) and inspect (the first bytes) decide them before the job is mapped,
// so no admin is asked for the author of a file the service cannot transcribe.

// codeFileTruncated is the reason code of a file shorter than its own header says: cut short
// by a copy or a recorder that stopped (the service fails it FILE_CORRUPTED or
// UPLOAD_INCOMPLETE).
const codeFileTruncated = "file_truncated"

// inspectLen is how much of a recording inspect reads: the service's minimum size, which
// covers media.SniffLen and tells a file under the minimum from one the source did not size.
const inspectLen = api.MinUploadBytes

// inspect reads the first bytes of j's recording from its source, when the source reads them
// cheaply (connectors.Peeker), and returns why the service would refuse it, "" when it may take
// it. A source that cannot be read now decides nothing: the upload opens it again, with its own
// checks and retries.
func (p *Pipeline) inspect(ctx context.Context, sc *SourceConfig, j *Job) string {
	if pk, ok := sc.Source.(connectors.Peeker); !ok || !pk.CheapOpen() {
		return ""
	}
	rc, err := sc.Source.Open(ctx, j.Recording)
	if err != nil {
		p.log().Debug("inspect: the source cannot be read now; the upload checks the content", p.jobAttrs(j, "error", err)...)
		return ""
	}
	defer rc.Close()
	head := make([]byte, inspectLen)
	n, err := io.ReadFull(rc, head)
	head = head[:n]
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// The whole file is in head: under the service's minimum.
		return fmt.Sprintf("%s: %d bytes, the service needs at least %d", api.CodeFileTooSmall, n, api.MinUploadBytes)
	case err != nil:
		p.log().Debug("inspect: the source cannot be read now; the upload checks the content", p.jobAttrs(j, "error", err)...)
		return ""
	}
	ext := media.Ext(j.Name)
	if !media.Plausible(ext, head) {
		return (&contentError{name: j.Name, head: head}).Error()
	}
	if want := wavDeclaredSize(ext, head); j.Size > 0 && want > j.Size {
		return fmt.Sprintf("%s: %d bytes, its WAV header announces %d", codeFileTruncated, j.Size, want)
	}
	return ""
}

// wavDeclaredSize is the file size a WAV file's RIFF header announces, 0 when ext is not wav,
// head is not RIFF/WAVE, or the size is left open (0 or 0xFFFFFFFF: a recorder that streams).
func wavDeclaredSize(ext string, head []byte) int64 {
	if ext != "wav" || len(head) < 12 || string(head[0:4]) != "RIFF" || string(head[8:12]) != "WAVE" {
		return 0
	}
	riff := binary.LittleEndian.Uint32(head[4:8])
	if riff == 0 || riff == 0xFFFFFFFF {
		return 0
	}
	return int64(riff) + 8
}

// serviceSkipReason is the skip reason of a file the service refused (apiErr, from err): its
// code first, as every skip reason, then what the service said.
func serviceSkipReason(apiErr *api.Error, err error) string {
	if apiErr == nil || apiErr.Code == "" {
		return err.Error()
	}
	if apiErr.Message == "" {
		return fmt.Sprintf("%s: the service refused the file (%d)", apiErr.Code, apiErr.Status)
	}
	return fmt.Sprintf("%s: the service refused the file (%d): %s", apiErr.Code, apiErr.Status, apiErr.Message)
}
