package media

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SniffLen is how many leading bytes of a file Sniff and Plausible look at: enough for every
// signature they know (three MPEG-TS packets need 385), never the whole file.
const SniffLen = 512

// Sniff returns the format whose signature the leading bytes of a file carry ("wav", "mp3",
// "m4a", "mp4", "mov", "webm", "matroska", "ogg", "opus", "flac", "aac", "amr", "asf", "avi",
// "mpeg-ps", "mpeg-ts", ...), looking at most at SniffLen bytes of head. ok is false when they
// match no audio or video format it knows; that alone does not prove the file is not media
// (see Plausible).
func Sniff(head []byte) (format string, ok bool) {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	if f := container(head); f != "" {
		return f, true
	}
	if f := id3(head); f != "" {
		return f, true
	}
	if f := elementary(head); f != "" {
		return f, true
	}
	return "", false
}

// strong are the extensions whose files always begin with their container's signature: a file
// named so whose first bytes match no media format at all cannot be a recording. Other
// extensions (MP3, AAC, AC-3, DTS, MPEG streams, raw PCM, YUV, GSM, DV, ...) may start with
// junk or mid-frame (a cut stream, a capture) or have no signature at all.
var strong = map[string]bool{
	"wav": true, "flac": true, "ogg": true, "oga": true, "opus": true, "spx": true, "ogv": true, "ogm": true,
	"m4a": true, "m4b": true, "m4r": true, "mp4": true, "m4v": true, "mov": true, "qt": true, "3gp": true,
	"3g2": true, "3ga": true, "f4v": true, "alac": true, "mkv": true, "mka": true, "webm": true, "weba": true,
	"avi": true, "divx": true, "asf": true, "wma": true, "wmv": true, "aiff": true, "aif": true, "aifc": true,
	"caf": true, "amr": true, "awb": true, "amr-wb": true, "flv": true, "voc": true, "ape": true, "wv": true,
	"tta": true, "rm": true, "rmvb": true, "ra": true, "nut": true, "au": true,
}

// Plausible reports whether a file with extension ext (without the dot, any case) whose content
// starts with head may be a recording. It is false only when that is ruled out: the format of
// ext always carries a signature and head matches no audio or video format, or head is plainly
// something else (text, HTML, a PDF, an archive, an image, an executable). When unsure it is
// true: a recording wrongly refused is lost, a wrong file let through only fails upstream.
func Plausible(ext string, head []byte) bool {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	if len(head) < 8 {
		return true // too little to tell; the service's size check has the last word
	}
	if _, ok := Sniff(head); ok {
		return true
	}
	ext = strings.ToLower(ext)
	if ext == "mjpeg" && bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}) {
		return true // Motion JPEG is a string of JPEG pictures
	}
	if strong[ext] {
		return false
	}
	return Other(head) == ""
}

// Other names what head plainly is when it is not media ("text", "a PDF document", "a ZIP
// archive", ...), or returns "" when it does not look like anything else it knows.
func Other(head []byte) string {
	for _, s := range others {
		if bytes.HasPrefix(head, s.magic) {
			return s.what
		}
	}
	if looksText(head) {
		return "text"
	}
	return ""
}

// Describe renders the first bytes of head for a reason people read: hex, the printable
// characters, and what they look like when Other knows.
func Describe(head []byte) string {
	n := min(len(head), 16)
	var hex, text strings.Builder
	for i, c := range head[:n] {
		if i > 0 {
			hex.WriteByte(' ')
		}
		fmt.Fprintf(&hex, "%02x", c)
		if c >= 0x20 && c < 0x7f {
			text.WriteByte(c)
		} else {
			text.WriteByte('.')
		}
	}
	if len(head) > n {
		hex.WriteString(" …")
	}
	s := fmt.Sprintf("first bytes %s %q", hex.String(), text.String())
	if what := Other(head); what != "" {
		s += ", looks like " + what
	}
	return s
}

var others = []struct {
	magic []byte
	what  string
}{
	{[]byte("%PDF-"), "a PDF document"},
	{[]byte("PK\x03\x04"), "a ZIP archive (or an Office document)"},
	{[]byte("PK\x05\x06"), "an empty ZIP archive"},
	{[]byte("\x89PNG\r\n\x1a\n"), "a PNG image"},
	{[]byte("GIF87a"), "a GIF image"},
	{[]byte("GIF89a"), "a GIF image"},
	{[]byte{0xFF, 0xD8, 0xFF}, "a JPEG image"},
	{[]byte("II*\x00"), "a TIFF image"},
	{[]byte("MM\x00*"), "a TIFF image"},
	{[]byte("\x7fELF"), "an executable"},
	{[]byte{0x1F, 0x8B, 0x08}, "a gzip archive"},
	{[]byte{0xFD, '7', 'z', 'X', 'Z', 0x00}, "an xz archive"},
	{[]byte{0x28, 0xB5, 0x2F, 0xFD}, "a zstd archive"},
	{[]byte{'7', 'z', 0xBC, 0xAF, 0x27, 0x1C}, "a 7-Zip archive"},
	{[]byte("Rar!\x1a\x07"), "a RAR archive"},
	{[]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, "an old Office document"},
	{[]byte("SQLite format 3\x00"), "an SQLite database"},
}

// looksText reports whether head is text: UTF-8 (a rune cut at the end allowed) without control
// characters other than tab, line breaks and form feed.
func looksText(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if len(head) == 0 {
		return false
	}
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) // a rune cut by the head's end
		}
		i += size
	}
	return true
}
