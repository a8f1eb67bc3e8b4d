package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/hajimehoshi/go-mp3"

	"github.com/transcript-bridge/bridge/internal/media"
)

// Failure codes of a probe, as the reference's error_code values.
const (
	codeCorrupted = "FILE_CORRUPTED"
	codeNoAudio   = "FILE_NO_AUDIO"
)

// probeResult is what the sandbox learned from an uploaded file.
type probeResult struct {
	duration  float64 // seconds
	mediaType string  // audio | video
	failure   string  // FILE_CORRUPTED, FILE_NO_AUDIO or "" when readable
}

var errNoAudio = errors.New("no audio track")

// probeMedia reads the duration of the file at path, named with extension ext. WAV, MP3,
// MP4/M4A/MOV, Ogg (Vorbis, Opus), FLAC and WebM/Matroska are parsed here; other formats go to
// ffprobe when it is installed, else their duration is estimated from the size at 128 kb/s.
func probeMedia(ctx context.Context, path, ext string) probeResult {
	res := probeResult{mediaType: media.Kind(ext)}
	f, err := os.Open(path)
	if err != nil {
		return probeResult{failure: codeCorrupted}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return probeResult{failure: codeCorrupted}
	}
	var d float64
	video := false
	switch ext {
	case "wav":
		d, err = probeWAV(f)
	case "mp3":
		d, err = probeMP3(f)
	case "mp4", "m4a", "mov", "m4v", "m4b", "3gp", "3g2", "qt", "f4v":
		d, video, err = probeMP4(f, st.Size())
	case "ogg", "oga", "opus", "ogv", "spx":
		d, err = probeOgg(f, st.Size())
	case "flac":
		d, err = probeFLAC(f)
	case "webm", "mkv", "mka", "weba":
		d, video, err = probeMatroska(f)
	default:
		d, err = probeExternal(ctx, path, st.Size())
	}
	switch {
	case errors.Is(err, errNoAudio):
		res.failure = codeNoAudio
	case err != nil || d <= 0 || math.IsNaN(d) || math.IsInf(d, 0):
		res.failure = codeCorrupted
	}
	res.duration = d
	if res.mediaType == "video" && !video && ext != "ogv" && ext != "webm" && ext != "mkv" {
		// A video container with only an audio track is audio.
		res.mediaType = "audio"
	}
	return res
}

func probeWAV(f io.ReadSeeker) (float64, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, err
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return 0, errors.New("not a RIFF/WAVE file")
	}
	var byteRate uint32
	for {
		var ch [8]byte
		if _, err := io.ReadFull(f, ch[:]); err != nil {
			return 0, errors.New("no data chunk")
		}
		size := binary.LittleEndian.Uint32(ch[4:8])
		switch string(ch[0:4]) {
		case "fmt ":
			var fmtb [16]byte
			if size < 16 {
				return 0, errors.New("short fmt chunk")
			}
			if _, err := io.ReadFull(f, fmtb[:]); err != nil {
				return 0, err
			}
			byteRate = binary.LittleEndian.Uint32(fmtb[8:12])
			if _, err := f.Seek(int64(size-16+size%2), io.SeekCurrent); err != nil {
				return 0, err
			}
		case "data":
			if byteRate == 0 {
				return 0, errors.New("data before fmt")
			}
			pos, _ := f.Seek(0, io.SeekCurrent)
			end, _ := f.Seek(0, io.SeekEnd)
			avail := uint64(end - pos)
			if uint64(size) < avail && size != 0 && size != math.MaxUint32 {
				avail = uint64(size)
			}
			return float64(avail) / float64(byteRate), nil
		default:
			if _, err := f.Seek(int64(size+size%2), io.SeekCurrent); err != nil {
				return 0, err
			}
		}
	}
}

func probeMP3(f io.ReadSeeker) (float64, error) {
	dec, err := mp3.NewDecoder(f)
	if err != nil {
		return 0, err
	}
	if dec.SampleRate() == 0 {
		return 0, errors.New("no sample rate")
	}
	// Length is in bytes of 16-bit stereo PCM: four bytes a sample.
	return float64(dec.Length()) / 4 / float64(dec.SampleRate()), nil
}

// probeOgg reads the codec's sample rate from the first page and the granule position of the
// last page.
func probeOgg(f io.ReadSeeker, size int64) (float64, error) {
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("OggS")) || len(head) < 28 {
		return 0, errors.New("not an Ogg stream")
	}
	segs := int(head[26])
	if len(head) < 27+segs+20 {
		return 0, errors.New("short Ogg page")
	}
	pkt := head[27+segs:]
	var rate float64
	var preSkip int64
	switch {
	case bytes.HasPrefix(pkt, []byte("\x01vorbis")):
		rate = float64(binary.LittleEndian.Uint32(pkt[12:16]))
	case bytes.HasPrefix(pkt, []byte("OpusHead")):
		rate, preSkip = 48000, int64(binary.LittleEndian.Uint16(pkt[10:12]))
	case bytes.HasPrefix(pkt, []byte("Speex   ")) && len(pkt) >= 40:
		rate = float64(binary.LittleEndian.Uint32(pkt[36:40]))
	default:
		return 0, errNoAudio
	}
	tail := int64(65536)
	if tail > size {
		tail = size
	}
	if _, err := f.Seek(size-tail, io.SeekStart); err != nil {
		return 0, err
	}
	buf := make([]byte, tail)
	if _, err := io.ReadFull(f, buf); err != nil {
		return 0, err
	}
	i := bytes.LastIndex(buf, []byte("OggS"))
	if i < 0 || i+14 > len(buf) || rate == 0 {
		return 0, errors.New("no final Ogg page")
	}
	granule := int64(binary.LittleEndian.Uint64(buf[i+6 : i+14]))
	return float64(granule-preSkip) / rate, nil
}

func probeFLAC(f io.Reader) (float64, error) {
	var b [42]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, err
	}
	if string(b[0:4]) != "fLaC" || b[4]&0x7f != 0 {
		return 0, errors.New("not a FLAC stream")
	}
	info := b[8:]
	v := binary.BigEndian.Uint64(info[10:18])
	rate := v >> 44
	total := v & (1<<36 - 1)
	if rate == 0 {
		return 0, errors.New("no sample rate")
	}
	return float64(total) / float64(rate), nil
}

// probeMatroska reads the segment's TimecodeScale and Duration and looks for an audio CodecID
// ("A_...") and a video one ("V_...") in the first megabyte, where the headers live.
func probeMatroska(f io.Reader) (float64, bool, error) {
	buf := make([]byte, 1<<20)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	if !bytes.HasPrefix(buf, []byte{0x1A, 0x45, 0xDF, 0xA3}) {
		return 0, false, errors.New("not an EBML file")
	}
	scale := 1e6
	if i := bytes.Index(buf, []byte{0x2A, 0xD7, 0xB1}); i >= 0 && i+4 < len(buf) {
		l := int(buf[i+3] & 0x0f)
		if buf[i+3]&0xf0 == 0x80 && i+4+l <= len(buf) {
			var v uint64
			for _, c := range buf[i+4 : i+4+l] {
				v = v<<8 | uint64(c)
			}
			scale = float64(v)
		}
	}
	var dur float64
	for _, pat := range [][]byte{{0x44, 0x89, 0x88}, {0x44, 0x89, 0x84}} {
		i := bytes.Index(buf, pat)
		if i < 0 || i+3+int(pat[2]&0x0f) > len(buf) {
			continue
		}
		if pat[2] == 0x88 {
			dur = math.Float64frombits(binary.BigEndian.Uint64(buf[i+3 : i+11]))
		} else {
			dur = float64(math.Float32frombits(binary.BigEndian.Uint32(buf[i+3 : i+7])))
		}
		break
	}
	video := bytes.Contains(buf, []byte("V_VP")) || bytes.Contains(buf, []byte("V_MPEG")) || bytes.Contains(buf, []byte("V_AV1"))
	if !bytes.Contains(buf, []byte{0x86, 0x88, 'A', '_'}) && !bytes.Contains(buf, []byte("A_OPUS")) &&
		!bytes.Contains(buf, []byte("A_VORBIS")) && !bytes.Contains(buf, []byte("A_AAC")) {
		return 0, video, errNoAudio
	}
	return dur * scale / 1e9, video, nil
}

// probeExternal asks ffprobe when it is installed, and otherwise estimates the duration from the
// size at 128 kb/s, the common bitrate of meeting recordings.
func probeExternal(ctx context.Context, path string, size int64) (float64, error) {
	if bin, err := exec.LookPath("ffprobe"); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "-v", "error", "-select_streams", "a", "-show_entries",
			"stream=duration:format=duration", "-of", "default=nw=1:nk=1", path).Output()
		if err != nil {
			return 0, err
		}
		fields := strings.Fields(string(out))
		if len(fields) == 0 {
			return 0, errNoAudio
		}
		for _, fld := range fields {
			if d, err := strconv.ParseFloat(fld, 64); err == nil && d > 0 {
				return d, nil
			}
		}
		return 0, errors.New("ffprobe gave no duration")
	}
	return float64(size) * 8 / 128000, nil
}
