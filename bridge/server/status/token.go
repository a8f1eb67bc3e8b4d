package status

import (
	"fmt"
	"os"
	"strings"
)

// MinTokenLength is the shortest admin token ReadToken accepts.
const MinTokenLength = 16

// ReadToken returns the admin token kept in the file at path, surrounding whitespace trimmed. It
// fails naming the file when it cannot be read, is empty, or holds fewer than MinTokenLength
// characters (never quoting the token).
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < MinTokenLength {
		return "", fmt.Errorf("admin token: %s holds %d characters, want at least %d", path, len(token), MinTokenLength)
	}
	return token, nil
}
