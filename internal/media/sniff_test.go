package media

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func head(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".head"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func random(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// pad fills b up to SniffLen with filler, as the rest of a file would.
func pad(b []byte, filler byte) []byte {
	return append(b, bytes.Repeat([]byte{filler}, max(0, SniffLen-len(b)))...)
}

// packets repeats a 188- or 192-byte packet carrying the sync byte at off.
func packets(size, off int) []byte {
	p := make([]byte, size)
	p[off] = 0x47
	return bytes.Repeat(p, 3)
}

// The heads of real recordings (testdata, from /work/shared/media) and hand-built heads of the
// formats the reference lists for which no recording is at hand.
func sniffCases(t *testing.T) []struct {
	name   string
	head   []byte
	format string
} {
	mp3 := head(t, "speech.mp3")
	noID3 := mp3[45:] // speech.mp3 without its 45-byte ID3v2 tag: bare MPEG audio frames
	return []struct {
		name   string
		head   []byte
		format string
	}{
		{"speech.wav", head(t, "speech.wav"), "wav"},
		{"speech-8k.wav", head(t, "speech-8k.wav"), "wav"},
		{"speech.mp3 (ID3)", mp3, "mp3"},
		{"speech.mp3 without ID3", noID3, "mp3"},
		{"speech.mp3 without ID3, cut mid-frame", noID3[100:], "mp3"},
		{"speech.m4a", head(t, "speech.m4a"), "m4a"},
		{"truncated.m4a", head(t, "truncated.m4a"), "m4a"},
		{"speech.ogg", head(t, "speech.ogg"), "ogg"},
		{"speech.opus", head(t, "speech.opus"), "opus"},
		{"speech.flac", head(t, "speech.flac"), "flac"},
		{"meeting.mp4", head(t, "meeting.mp4"), "mp4"},
		{"silent-video.mp4", head(t, "silent-video.mp4"), "mp4"},
		{"meeting.mov", head(t, "meeting.mov"), "mov"},
		{"meeting.webm", head(t, "meeting.webm"), "webm"},
		{"QuickTime without ftyp", pad([]byte("\x00\x00\x00\x08wide\x00\x01\x00\x00mdat"), 0x11), "mov"},
		{"3GP", pad([]byte("\x00\x00\x00\x14ftyp3gp4\x00\x00\x02\x00isom"), 0), "3gp"},
		{"MKV", pad([]byte("\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\x82\x88matroska"), 0), "matroska"},
		{"AVI", pad([]byte("RIFF\x00\x10\x00\x00AVI LIST"), 0), "avi"},
		{"RF64 WAV", pad([]byte("RF64\xff\xff\xff\xffWAVEds64"), 0), "wav"},
		{"AIFF", pad([]byte("FORM\x00\x00\x10\x00AIFFCOMM"), 0), "aiff"},
		{"AAC ADTS", pad([]byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC}, 0x21), "aac"},
		{"AAC ADTS with ID3", pad(append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), 0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC), 0x21), "aac"},
		{"AMR", pad([]byte("#!AMR\n\x3c\x91\x17\x16"), 0x3c), "amr"},
		{"AMR-WB", pad([]byte("#!AMR-WB\n\x24"), 0x24), "amr-wb"},
		{"WMA/ASF", pad([]byte("\x30\x26\xb2\x75\x8e\x66\xcf\x11\xa6\xd9\x00\xaa\x00\x62\xce\x6c"), 0), "asf"},
		{"MPEG-PS", pad([]byte("\x00\x00\x01\xba\x44\x00\x04\x00\x04\x01"), 0xff), "mpeg-ps"},
		{"MPEG video", pad([]byte("\x00\x00\x01\xb3\x16\x00\xf0\x15"), 0), "mpeg-video"},
		{"H.264 Annex B", pad([]byte("\x00\x00\x00\x01\x67\x42\xc0\x1e"), 0x33), "annexb"},
		{"MPEG-TS", packets(188, 0), "mpeg-ts"},
		{"MPEG-TS cut mid-packet", packets(188, 100), "mpeg-ts"},
		{"M2TS", packets(192, 4), "m2ts"},
		{"CAF", pad([]byte("caff\x00\x01\x00\x00desc"), 0), "caf"},
		{"AC-3", pad([]byte{0x0B, 0x77, 0x3A, 0x10, 0x14, 0x40}, 0x5a), "ac3"},
		{"DTS", pad([]byte{0x7F, 0xFE, 0x80, 0x01, 0xFC, 0x3C}, 0x5a), "dts"},
		{"FLV", pad([]byte("FLV\x01\x05\x00\x00\x00\x09"), 0), "flv"},
		{"RealMedia", pad([]byte(".RMF\x00\x00\x00\x12"), 0), "rm"},
		{"Sun AU", pad([]byte(".snd\x00\x00\x00\x18"), 0), "au"},
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range sniffCases(t) {
		if got, ok := Sniff(tc.head); got != tc.format || !ok {
			t.Errorf("Sniff(%q) = %q, %v, want %q, true", tc.name, got, ok, tc.format)
		}
	}
	for _, tc := range []struct {
		name string
		head []byte
	}{
		{"random bytes", random(SniffLen, 1)},
		{"other random bytes", random(SniffLen, 2)},
		{"a text file", pad([]byte("Minutes of the meeting\n\nPresent: Sam, Olivia.\n"), ' ')},
		{"an HTML page", pad([]byte("<html><body>Sorry, this page is not available.</body></html>"), '\n')},
		{"a PNG image", pad([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 0)},
		{"a HEIF picture", pad([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), 0)},
		{"zeros", make([]byte, SniffLen)},
	} {
		if got, ok := Sniff(tc.head); ok {
			t.Errorf("Sniff(%q) = %q, true, want false", tc.name, got)
		}
	}
}

func TestPlausible(t *testing.T) {
	text := pad([]byte("Minutes of the meeting\n\nPresent: Sam, Olivia.\n"), ' ')
	noise := random(SniffLen, 3)
	for _, tc := range []struct {
		name, ext string
		head      []byte
		want      bool
	}{
		{"random bytes named .wav", "wav", noise, false},
		{"random bytes named .m4a", "m4a", noise, false},
		{"random bytes named .webm", "webm", noise, false},
		{"text named .wav", "wav", text, false},
		{"text named .mp3", "mp3", text, false},
		{"an HTML error page named .mp4", "mp4", pad([]byte("<!DOCTYPE html>\n<html>"), ' '), false},
		{"a PDF named .mp3", "mp3", pad([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3"), 0), false},
		{"a zip named .aac", "aac", pad([]byte("PK\x03\x04\x14\x00"), 0), false},
		{"UTF-8 text with a BOM named .ogg", "ogg", pad([]byte("\xef\xbb\xbfProtokoll: Größe"), ' '), false},
		// What no signature can rule out is let through: the service decides.
		{"random bytes named .mp3 (a stream cut mid-frame)", "mp3", noise, true},
		{"random bytes named .pcm (raw samples have no header)", "pcm", noise, true},
		{"random bytes named .yuv", "yuv", noise, true},
		{"zeros named .gsm", "gsm", make([]byte, SniffLen), true},
		{"a JPEG named .mjpeg", "mjpeg", pad([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10}, 0), true},
		{"a JPEG named .mp3", "mp3", pad([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10}, 0), false},
		{"a few bytes", "wav", []byte("RIF"), true},
		// A recording under another extension of the service's list still passes.
		{"an MP3 named .wav", "WAV", head(t, "speech.mp3"), true},
		{"an M4A named .mp4", "mp4", head(t, "speech.m4a"), true},
	} {
		if got := Plausible(tc.ext, tc.head); got != tc.want {
			t.Errorf("Plausible(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Every real recording and every hand-built head passes under its own extension, and under
	// every other extension the service takes.
	for _, tc := range sniffCases(t) {
		for ext := range kinds {
			if !Plausible(ext, tc.head) {
				t.Errorf("Plausible(%q as .%s) = false, want true", tc.name, ext)
			}
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		head []byte
		want string
	}{
		{[]byte("<html><body>Sorry, this page is not available.</body></html>"),
			`first bytes 3c 68 74 6d 6c 3e 3c 62 6f 64 79 3e 53 6f 72 72 … "<html><body>Sorr", looks like text`},
		{[]byte{0x0d, 0xfc, 0xeb}, `first bytes 0d fc eb "..."`},
		{[]byte("%PDF-1.7"), `first bytes 25 50 44 46 2d 31 2e 37 "%PDF-1.7", looks like a PDF document`},
	} {
		if got := Describe(tc.head); got != tc.want {
			t.Errorf("Describe(%q) = %s, want %s", tc.head, got, tc.want)
		}
	}
	if !strings.Contains(Describe(random(64, 4)), "…") {
		t.Errorf("Describe of 64 bytes does not say it shows only the first ones")
	}
}
