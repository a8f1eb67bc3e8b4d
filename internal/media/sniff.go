package media

import (
	"bytes"
	"encoding/binary"
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

// container recognises the formats that begin with a container header.
func container(b []byte) string {
	at := func(off int, s string) bool { return len(b) >= off+len(s) && string(b[off:off+len(s)]) == s }
	switch {
	case (at(0, "RIFF") || at(0, "RIFX")) && len(b) >= 12:
		switch string(b[8:12]) {
		case "WAVE":
			return "wav"
		case "AVI ", "AVIX":
			return "avi"
		case "RMP3":
			return "mp3"
		case "CDXA":
			return "mpeg-ps" // Video CD
		}
		return ""
	case (at(0, "RF64") || at(0, "BW64")) && at(8, "WAVE"):
		return "wav"
	case at(0, "riff\x2e\x91\xcf\x11\xa5\xd6\x28\xdb\x04\xc1\x00\x00"):
		return "wav" // Sony Wave64
	case at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC")):
		return "aiff"
	case at(0, "fLaC"):
		return "flac"
	case at(0, "OggS"):
		return ogg(b)
	case at(0, "\x1a\x45\xdf\xa3"):
		if bytes.Contains(b[:min(len(b), 64)], []byte("webm")) {
			return "webm"
		}
		return "matroska"
	case at(0, "\x30\x26\xb2\x75\x8e\x66\xcf\x11\xa6\xd9\x00\xaa\x00\x62\xce\x6c"):
		return "asf"
	case at(0, "caff\x00\x01"):
		return "caf"
	case at(0, "#!AMR-WB"):
		return "amr-wb"
	case at(0, "#!AMR"):
		return "amr"
	case at(0, ".snd"):
		return "au"
	case at(0, "Creative Voice File\x1a"):
		return "voc"
	case at(0, "MAC "):
		return "ape"
	case at(0, "wvpk"):
		return "wv"
	case at(0, "TTA1"):
		return "tta"
	case at(0, ".RMF"):
		return "rm"
	case at(0, ".ra\xfd"):
		return "ra"
	case at(0, "FLV\x01"):
		return "flv"
	case at(0, "\x06\x0e\x2b\x34\x02\x05\x01\x01"):
		return "mxf"
	case at(0, "nut/multimedia container\x00"):
		return "nut"
	case at(0, "MPCK") || at(0, "MP+"):
		return "mpc"
	case at(0, "ADIF"):
		return "aac"
	case at(0, "\x1f\x07\x00"):
		return "dv"
	}
	return isoBMFF(b)
}

// ogg names an Ogg stream by its first packet's codec.
func ogg(b []byte) string {
	if len(b) < 27 {
		return "ogg"
	}
	// The first page holds one segment table of b[26] entries, then the first packet.
	p := 27 + int(b[26])
	if p >= len(b) {
		return "ogg"
	}
	switch pkt := b[p:]; {
	case bytes.HasPrefix(pkt, []byte("OpusHead")):
		return "opus"
	case bytes.HasPrefix(pkt, []byte("Speex   ")):
		return "speex"
	case bytes.HasPrefix(pkt, []byte("\x80theora")):
		return "ogv"
	}
	return "ogg"
}

// isoBMFF recognises MP4, M4A, MOV and 3GP files (ISO base media, QuickTime): a first box of a
// known type. QuickTime files may start with moov, mdat, wide, free or skip rather than ftyp.
func isoBMFF(b []byte) string {
	if len(b) < 12 {
		return ""
	}
	size := binary.BigEndian.Uint32(b)
	if size != 0 && size != 1 && size < 8 {
		return ""
	}
	switch typ := string(b[4:8]); typ {
	case "ftyp":
		switch brand := string(b[8:12]); {
		case brand == "M4A " || brand == "M4B " || brand == "M4P " || brand == "M4V ":
			return "m4a"
		case brand == "qt  ":
			return "mov"
		case strings.HasPrefix(brand, "3gp") || strings.HasPrefix(brand, "3g2"):
			return "3gp"
		case isoImages[brand]:
			return "" // HEIF, AVIF, JPEG 2000, camera raw: pictures, not recordings
		}
		return "mp4"
	case "moov", "mdat", "wide", "free", "skip", "pnot", "PICT", "junk":
		return "mov"
	case "moof", "styp", "sidx", "uuid", "prfl", "mfra":
		return "mp4"
	}
	return ""
}

var isoImages = map[string]bool{
	"heic": true, "heix": true, "heim": true, "heis": true, "hevc": true, "hevx": true, "hevm": true, "hevs": true,
	"mif1": true, "msf1": true, "avif": true, "avis": true, "jp2 ": true, "jpx ": true, "jpm ": true, "crx ": true,
}

// id3 recognises an ID3v2 tag (MP3, AAC, FLAC, ...) and names what follows it when the head
// holds it.
func id3(b []byte) string {
	if len(b) < 10 || string(b[:3]) != "ID3" || b[3] < 2 || b[3] > 4 || b[5]&0x0f != 0 {
		return ""
	}
	for _, c := range b[6:10] {
		if c&0x80 != 0 {
			return "" // the size is syncsafe: seven bits a byte
		}
	}
	size := int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9]) + 10
	if b[5]&0x10 != 0 {
		size += 10 // footer
	}
	if size < len(b) {
		rest := b[size:]
		if f := container(rest); f != "" {
			return f
		}
		if f := elementary(rest); f != "" {
			return f
		}
	}
	return "mp3" // ID3 tags are MP3's, mostly
}

// elementary recognises bare audio and video streams: MPEG audio (MP3, MP2) and ADTS AAC
// frames, AC-3, DTS, MPEG program and transport streams, and Annex B video (H.264, HEVC,
// MPEG-1/2 video). A frame right at the start (after zero padding) is enough; further in, two
// frames in a row are needed, so random bytes do not pass.
func elementary(b []byte) string {
	i := 0
	for i < len(b) && b[i] == 0 {
		i++
	}
	if i >= 2 && i < len(b) && b[i] == 1 && i+1 < len(b) {
		switch b[i+1] {
		case 0xBA:
			return "mpeg-ps"
		case 0xB3:
			return "mpeg-video"
		}
		return "annexb" // an H.264, HEVC or MPEG elementary video stream
	}
	if f, _, ok := audioFrame(b[i:]); ok {
		return f
	}
	if len(b) >= 4 {
		switch {
		case b[0] == 0x0B && b[1] == 0x77:
			return "ac3"
		case string(b[:4]) == "\x7f\xfe\x80\x01", string(b[:4]) == "\xfe\x7f\x01\x80",
			string(b[:4]) == "\x1f\xff\xe8\x00", string(b[:4]) == "\xff\x1f\x00\xe8":
			return "dts"
		}
	}
	if f := transport(b); f != "" {
		return f
	}
	for j := 0; j+3 < len(b); j++ {
		if b[j] == 0 && b[j+1] == 0 && b[j+2] == 1 && (b[j+3] == 0xBA || b[j+3] == 0xB3) {
			return map[byte]string{0xBA: "mpeg-ps", 0xB3: "mpeg-video"}[b[j+3]]
		}
		if b[j] == 0xFF {
			if f, n, ok := audioFrame(b[j:]); ok && j+n+4 <= len(b) {
				if g, _, ok := audioFrame(b[j+n:]); ok && g == f {
					return f
				}
			}
		}
	}
	return ""
}

// transport recognises MPEG-TS (188-byte packets) and M2TS (192-byte packets) by three sync
// bytes at the packet distance.
func transport(b []byte) string {
	for _, c := range []struct {
		stride int
		name   string
	}{{188, "mpeg-ts"}, {192, "m2ts"}} {
		for k := 0; k < c.stride && k+2*c.stride < len(b); k++ {
			if b[k] == 0x47 && b[k+c.stride] == 0x47 && b[k+2*c.stride] == 0x47 {
				return c.name
			}
		}
	}
	return ""
}

// MPEG audio bitrates in kb/s by [version 1 / 2 and 2.5][layer I, II, III][index].
var bitrates = [2][3][15]int{
	{{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}},
	{{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}},
}

var sampleRates = map[byte][3]int{3: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 0: {11025, 12000, 8000}}

var adtsRates = [13]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// audioFrame checks an MPEG audio or ADTS frame header at the start of b and returns the
// format ("mp3", "mp2", "mp1" or "aac") and the frame's length.
func audioFrame(b []byte) (format string, length int, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return "", 0, false
	}
	if b[1]&0xF6 == 0xF0 { // 12-bit sync and layer 00: ADTS
		if len(b) < 7 || int(b[2]>>2&0x0F) >= len(adtsRates) {
			return "", 0, false
		}
		n := int(b[3]&3)<<11 | int(b[4])<<3 | int(b[5]>>5)
		if n < 7 {
			return "", 0, false
		}
		return "aac", n, true
	}
	version, layer := b[1]>>3&3, b[1]>>1&3 // version 1 is reserved, layer 0 too
	br, sr, pad := int(b[2]>>4), int(b[2]>>2&3), int(b[2]>>1&1)
	if version == 1 || layer == 0 || br == 0 || br == 15 || sr == 3 {
		return "", 0, false
	}
	v := 0
	if version != 3 {
		v = 1
	}
	l := 3 - int(layer) // 0: layer I, 1: layer II, 2: layer III
	bps, rate := bitrates[v][l][br]*1000, sampleRates[version][sr]
	switch {
	case l == 0:
		length = (12*bps/rate + pad) * 4
	case l == 2 && v == 1:
		length = 72*bps/rate + pad
	default:
		length = 144*bps/rate + pad
	}
	return [3]string{"mp1", "mp2", "mp3"}[l], length, length >= 4
}
