package media

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
