// Package mediatest makes small, valid recordings for tests.
package mediatest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
)

// WAV returns a valid PCM WAV file of the given length: mono, 8-bit, byteRate samples a second
// (8000 when 0; a byte rate of 1 claims long durations with few bytes). Its samples are drawn
// from seed, so different seeds give different files.
func WAV(seconds float64, byteRate int, seed uint64) []byte {
	if byteRate == 0 {
		byteRate = 8000
	}
	n := int(seconds * float64(byteRate))
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(byteRate), uint32(byteRate), uint16(1), uint16(8)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(n))
	rng := rand.New(rand.NewPCG(seed, 7))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	b.Write(data)
	return b.Bytes()
}
