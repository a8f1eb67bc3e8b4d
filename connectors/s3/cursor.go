package s3

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
)

// The cursor is the map of key → ETag of the last listing, as gzipped JSON in base64 (about
// 10 bytes a key for typical names), prefixed with its format.
const cursorPrefix = "s3v1:"

func encodeCursor(seen map[string]string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	json.NewEncoder(zw).Encode(seen)
	zw.Close()
	return cursorPrefix + base64.RawStdEncoding.EncodeToString(b.Bytes())
}

// decodeCursor reads a cursor; "" is an empty one. A cursor of another format is an error
// rather than a silent full resync.
func decodeCursor(c string) (map[string]string, error) {
	seen := map[string]string{}
	if c == "" {
		return seen, nil
	}
	if len(c) < len(cursorPrefix) || c[:len(cursorPrefix)] != cursorPrefix {
		return nil, fmt.Errorf("s3 cursor: unknown format %.12q", c)
	}
	raw, err := base64.RawStdEncoding.DecodeString(c[len(cursorPrefix):])
	if err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	if err := json.Unmarshal(body, &seen); err != nil {
		return nil, fmt.Errorf("s3 cursor: %w", err)
	}
	return seen, nil
}
