package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// probeMP4 walks the ISO BMFF boxes moov/trak/mdia for each track's handler (soun, vide) and
// media header (timescale, duration), skipping mdat without reading it.
func probeMP4(f io.ReadSeeker, size int64) (dur float64, video bool, err error) {
	m := &mp4Probe{f: f}
	if err := m.walk(size, ""); err != nil {
		return 0, false, err
	}
	if !m.sawMoov {
		return 0, false, errors.New("no moov box")
	}
	if !m.audio {
		return 0, m.video, errNoAudio
	}
	if m.audioDur == 0 {
		m.audioDur = m.movieDur
	}
	return m.audioDur, m.video, nil
}

// mp4Probe is what probeMP4 has learned so far of an ISO BMFF file.
type mp4Probe struct {
	f                     io.ReadSeeker
	audioDur, movieDur    float64 // the longest audio track's; the movie header's
	audio, video, sawMoov bool
	trackHandler          string  // of the track being walked: soun, vide, ...
	trackDur              float64 // of the track being walked
}

// walk reads the boxes from the current position to end, the end of their parent; path is the
// parent's ("/moov/trak").
func (m *mp4Probe) walk(end int64, path string) error {
	for {
		pos, _ := m.f.Seek(0, io.SeekCurrent)
		if pos+8 > end {
			return nil
		}
		typ, bsize, hdr, err := m.boxHeader(pos, end)
		if err != nil {
			return err
		}
		switch typ {
		case "moov", "trak", "mdia":
			err = m.container(typ, pos+bsize, path)
		case "mvhd", "mdhd":
			err = m.mediaHeader(typ, bsize-hdr)
		case "hdlr":
			err = m.handler(bsize-hdr, path)
		}
		if err != nil {
			return err
		}
		if _, err := m.f.Seek(pos+bsize, io.SeekStart); err != nil {
			return err
		}
	}
}

// boxHeader reads the header of the box at pos, inside a parent that ends at end: the box's
// type, its size and the header's (16 bytes with a 64-bit size, else 8).
func (m *mp4Probe) boxHeader(pos, end int64) (typ string, bsize, hdr int64, err error) {
	var h [8]byte
	if _, err := io.ReadFull(m.f, h[:]); err != nil {
		return "", 0, 0, err
	}
	bsize = int64(binary.BigEndian.Uint32(h[0:4]))
	typ = string(h[4:8])
	hdr = int64(8)
	if bsize == 1 {
		var l [8]byte
		if _, err := io.ReadFull(m.f, l[:]); err != nil {
			return "", 0, 0, err
		}
		bsize, hdr = int64(binary.BigEndian.Uint64(l[:])), 16
	} else if bsize == 0 {
		bsize = end - pos
	}
	if bsize < hdr || pos+bsize > end {
		return "", 0, 0, errors.New("box " + typ + " overruns its parent")
	}
	return typ, bsize, hdr, nil
}

// container walks the boxes of a moov, trak or mdia box, which ends at end; at the end of a
// trak, its handler says whether the file has audio (and how long) or video.
func (m *mp4Probe) container(typ string, end int64, path string) error {
	if typ == "moov" {
		m.sawMoov = true
	}
	if typ == "trak" {
		m.trackHandler, m.trackDur = "", 0
	}
	if err := m.walk(end, path+"/"+typ); err != nil {
		return err
	}
	if typ == "trak" {
		switch m.trackHandler {
		case "soun":
			m.audio = true
			m.audioDur = math.Max(m.audioDur, m.trackDur)
		case "vide":
			m.video = true
		}
	}
	return nil
}

// mediaHeader reads the timescale and duration of a movie (mvhd) or track media (mdhd)
// header whose body has size bytes.
func (m *mp4Probe) mediaHeader(typ string, size int64) error {
	if size < 1 {
		return fmt.Errorf("mp4: %s box has no body", typ)
	}
	b := make([]byte, min(size, 32))
	if _, err := io.ReadFull(m.f, b); err != nil {
		return err
	}
	var scale, units float64
	if b[0] == 1 && len(b) >= 32 {
		scale, units = float64(binary.BigEndian.Uint32(b[20:24])), float64(binary.BigEndian.Uint64(b[24:32]))
	} else if len(b) >= 20 {
		scale, units = float64(binary.BigEndian.Uint32(b[12:16])), float64(binary.BigEndian.Uint32(b[16:20]))
	}
	if scale > 0 {
		if typ == "mvhd" {
			m.movieDur = units / scale
		} else {
			m.trackDur = units / scale
		}
	}
	return nil
}

// handler reads a handler box (hdlr) whose body has size bytes: inside mdia, it names the
// track's kind.
func (m *mp4Probe) handler(size int64, path string) error {
	b := make([]byte, max(0, min(size, 12)))
	if _, err := io.ReadFull(m.f, b); err != nil {
		return err
	}
	if len(b) >= 12 && strings.HasSuffix(path, "/mdia") {
		m.trackHandler = string(b[8:12])
	}
	return nil
}
