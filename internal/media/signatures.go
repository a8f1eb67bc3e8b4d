package media

import (
	"bytes"
	"encoding/binary"
	"strings"
)

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
