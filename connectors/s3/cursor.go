package s3

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
)

// The cursor is the map of key → a 48-bit hash of the ETag (12 hex digits) of the last
// listing, as gzipped JSON in base64, prefixed with its format. It grows with the objects under
// the prefix, not with time: about 10 bytes an object for typical names (sorted keys share
// their beginnings), about 1 MB for 100,000. A watermark (last key, last date) would be
// constant-size but would skip a key arriving late: one sorting before the keys already seen,
// or a multipart upload dated when it began. A replaced object is missed only if its new ETag
// hashes to the old one's 48 bits (about one replacement in 2.8e14). Version 1 cursors held
// whole ETags and are still read.
const (
	cursorPrefix   = "s3v2:"
	cursorPrefixV1 = "s3v1:"
)

// etagSum is what the cursor keeps of an ETag.
func etagSum(etag string) string {
	h := fnv.New64a()
	io.WriteString(h, etag)
	return strconv.FormatUint(h.Sum64()>>16, 16)
}

func encodeCursor(seen map[string]string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	json.NewEncoder(zw).Encode(seen)
	zw.Close()
	return cursorPrefix + base64.RawStdEncoding.EncodeToString(b.Bytes())
}

// decodeCursor reads a cursor into key → etagSum; "" is an empty one. A cursor of another
// format is an error rather than a silent full resync.
func decodeCursor(c string) (map[string]string, error) {
	seen := map[string]string{}
	if c == "" {
		return seen, nil
	}
	var prefix string
	for _, p := range []string{cursorPrefix, cursorPrefixV1} {
		if len(c) >= len(p) && c[:len(p)] == p {
			prefix = p
		}
	}
	if prefix == "" {
		return nil, fmt.Errorf("s3 cursor: unknown format %.12q", c)
	}
	raw, err := base64.RawStdEncoding.DecodeString(c[len(prefix):])
	if err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	if err := json.NewDecoder(zr).Decode(&seen); err != nil && err != io.EOF {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	if prefix == cursorPrefixV1 {
		for k, etag := range seen {
			seen[k] = etagSum(etag)
		}
	}
	return seen, nil
}
