package mapping

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/transcript-bridge/bridge/api"
)

// addMapping records external user → author after checking the author's form.
func (m *Mapper) addMapping(external, author string) error {
	external, author = strings.TrimSpace(external), strings.TrimSpace(author)
	if external == "" {
		return fmt.Errorf("empty external user")
	}
	if strings.HasPrefix(author, "external:") {
		return fmt.Errorf("member %q: use email:… or user:…", author)
	}
	if err := api.ValidateAuthor(author, true); err != nil {
		return fmt.Errorf("member %q: %w", author, err)
	}
	if strings.Contains(external, "@") {
		external = strings.ToLower(external)
	}
	m.table[external] = author
	return nil
}

// Table returns the map rule's entries (external user → author).
func (m *Mapper) Table() map[string]string { return m.table }

// loadMapFile reads a CSV of external user, member (a header line is skipped); errors name
// the line.
func (m *Mapper) loadMapFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord, r.Comment, r.TrimLeadingSpace = 2, '#', true
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 && !strings.Contains(rec[1], ":") { // a header
			continue
		}
		if err := m.addMapping(rec[0], rec[1]); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
	}
}
