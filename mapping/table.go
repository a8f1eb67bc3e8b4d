package mapping

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/transcript-bridge/bridge/api"
)

// addMapping records external user → author in table after checking the author's form.
func addMapping(table map[string]string, external, author string) error {
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
	table[external] = author
	return nil
}

// tab returns the map rule's entries in force; callers must not change them.
func (m *Mapper) tab() map[string]string { return *m.table.Load() }

// Table returns the map rule's entries (external user → author) in force; the caller must not
// change them.
func (m *Mapper) Table() map[string]string { return m.tab() }

// parseMapFile adds the CSV data of external user, member (a header line is skipped) to table;
// errors name path and the line.
func parseMapFile(path string, data []byte, table map[string]string) error {
	r := csv.NewReader(bytes.NewReader(data))
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
		if err := addMapping(table, rec[0], rec[1]); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
	}
}

// Reload reads mapping.map_file again and, when its content changed since it was last read,
// puts its entries (over those of mapping.map) in force for the next mappings; changed reports
// that. A file that cannot be read or has a bad line is an error naming it, reported once, and
// the entries in force stay. Without a map file it does nothing. Reading a map file is cheap
// enough to do every few seconds; the content is compared by hash, so an edit that keeps the
// size and the modification time is seen too.
func (m *Mapper) Reload() (changed bool, err error) {
	if m.mapFile == "" {
		return false, nil
	}
	m.file.Lock()
	defer m.file.Unlock()
	data, err := os.ReadFile(m.mapFile)
	if err != nil {
		return false, m.reloadFailed(err)
	}
	sum := sha256.Sum256(data)
	if sum == m.fileSum {
		m.fileErr = ""
		return false, nil
	}
	m.fileSum = sum // a bad file is reported once, not at every look
	table := maps.Clone(m.static)
	if err := parseMapFile(m.mapFile, data, table); err != nil {
		return false, m.reloadFailed(err)
	}
	m.fileErr = ""
	m.table.Store(&table)
	return true, nil
}

// reloadFailed returns err, naming the setting, unless it was the last one reported.
func (m *Mapper) reloadFailed(err error) error {
	if err.Error() == m.fileErr {
		return nil
	}
	m.fileErr = err.Error()
	return fmt.Errorf("mapping.map_file: %w (the entries read before stay in force)", err)
}
