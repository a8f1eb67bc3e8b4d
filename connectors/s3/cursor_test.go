package s3

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestVersion1CursorIsStillRead: a cursor of whole ETags (s3v1) reads as their hashes, so an
// upgrade lists nothing again.
func TestVersion1CursorIsStillRead(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	json.NewEncoder(zw).Encode(map[string]string{"calls/a.wav": "0cc175b9c0f1b6a831c399e269772661"})
	zw.Close()
	seen, err := decodeCursor(cursorPrefixV1 + base64.RawStdEncoding.EncodeToString(b.Bytes()))
	if err != nil || len(seen) != 1 || seen["calls/a.wav"] != etagSum("0cc175b9c0f1b6a831c399e269772661") {
		t.Fatalf("decodeCursor(v1) = %v, %v; want calls/a.wav with its ETag's hash", seen, err)
	}
	again, err := decodeCursor(encodeCursor(seen))
	if err != nil || again["calls/a.wav"] != seen["calls/a.wav"] {
		t.Fatalf("round trip = %v, %v; want %v", again, err, seen)
	}
	if _, err := decodeCursor("s3v9:abc"); err == nil {
		t.Error("an unknown format was read")
	}
}
