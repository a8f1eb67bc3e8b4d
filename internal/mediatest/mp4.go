package mediatest

import (
	"encoding/binary"
	"math/rand/v2"
)

// MP4 returns a small, valid MP4 (ISO BMFF) video recording of the given length, as Google Meet
// saves one: an ftyp box, a moov box with a movie header and a sound and a video track (media
// headers and handlers), then an mdat box of bytes drawn from seed, so different seeds give
// different files. Its samples are not real media; its boxes are what probes read.
func MP4(seconds float64, seed uint64) []byte {
	const scale = 1000
	header := func() []byte { // version 0: flags, creation and modification times, timescale, duration
		b := make([]byte, 20)
		binary.BigEndian.PutUint32(b[12:], scale)
		binary.BigEndian.PutUint32(b[16:], uint32(seconds*scale))
		return b
	}
	track := func(kind string) []byte {
		hdlr := append(make([]byte, 8), kind...) // version, flags and pre_defined, then the handler type
		hdlr = append(hdlr, make([]byte, 13)...) // reserved and an empty name
		return box("trak", box("mdia", box("mdhd", header()), box("hdlr", hdlr)))
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	data := make([]byte, 4096+int(seconds*100))
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	out := box("ftyp", []byte("isom\x00\x00\x02\x00isomiso2avc1mp41"))
	out = append(out, box("moov", box("mvhd", header()), track("soun"), track("vide"))...)
	return append(out, box("mdat", data)...)
}

// box is an ISO BMFF box of type typ holding the concatenated bodies.
func box(typ string, bodies ...[]byte) []byte {
	n := 8
	for _, b := range bodies {
		n += len(b)
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 0, n), uint32(n))
	out = append(out, typ...)
	for _, b := range bodies {
		out = append(out, b...)
	}
	return out
}
