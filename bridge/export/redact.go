package export

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/transcript-bridge/bridge/bridge/redact"
)

// redaction returns the redaction settings of c.
func (c *Config) redaction() redact.Config {
	return redact.Config{Kinds: c.Redact, Patterns: c.RedactPatterns, DefaultRegion: c.DefaultRegion}
}

// redacts reports whether c redacts anything (after Validate).
func (c *Config) redacts() bool { return c.redactor != nil }

// redactTitle returns title redacted when c redacts, counting in counts (which may be nil: the
// counts are then dropped).
func (c *Config) redactTitle(title string, counts redact.Counts) string {
	if !c.redacts() || title == "" {
		return title
	}
	if counts == nil {
		counts = redact.Counts{}
	}
	return c.redactor.Redact(title, counts)
}

// redactName returns a file name redacted, its extension kept (the service names files after
// titles). What it replaces is counted in the texts already (the title).
func (c *Config) redactName(name string) string {
	if !c.redacts() {
		return name
	}
	ext := path.Ext(name)
	return c.redactor.Redact(strings.TrimSuffix(name, ext), redact.Counts{}) + ext
}

// redactBody returns one exported file redacted: for json the record's title, summary, text,
// segments' and reports' texts; for md and txt the whole text.
func (c *Config) redactBody(body []byte, counts redact.Counts) ([]byte, error) {
	if c.Format != "json" {
		return []byte(c.redactor.Redact(string(body), counts)), nil
	}
	var rec map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	str := func(m map[string]any, k string) {
		if s, ok := m[k].(string); ok {
			m[k] = c.redactor.Redact(s, counts)
		}
	}
	str(rec, "title")
	str(rec, "summary")
	str(rec, "text")
	for _, list := range []string{"segments", "prompt_results"} {
		items, _ := rec[list].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				str(m, "text")
			}
		}
	}
	return json.Marshal(rec)
}

// redactZip rewrites the archive file in place with every entry redacted (its name too: the
// service names files after titles), returning each entry's counts in the archive's order.
func (c *Config) redactZip(dest Destination, file string) ([]redact.Counts, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	out, err := dest.Temp()
	if err != nil {
		return nil, err
	}
	var all []redact.Counts
	w := zip.NewWriter(out)
	used := map[string]bool{}
	for _, f := range z.File {
		counts := redact.Counts{}
		err = c.redactEntry(w, f, counts, used)
		if err != nil {
			break
		}
		all = append(all, counts)
	}
	err = errors.Join(err, w.Close(), out.Close())
	if err == nil {
		err = os.Rename(out.Name(), file)
	}
	if err != nil {
		os.Remove(out.Name())
		return nil, fmt.Errorf("redact: %w", err)
	}
	return all, nil
}

// redactEntry copies the entry f into w, redacted, under a name unique among used (case
// aside, as the service's).
func (c *Config) redactEntry(w *zip.Writer, f *zip.File, counts redact.Counts, used map[string]bool) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	body, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	if body, err = c.redactBody(body, counts); err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	hdr := f.FileHeader
	hdr.Name, _ = unique(c.redactName(f.Name), func(n string) (bool, error) { return used[strings.ToLower(n)], nil })
	used[strings.ToLower(hdr.Name)] = true
	hdr.CompressedSize64, hdr.UncompressedSize64, hdr.CRC32 = 0, 0, 0
	ew, err := w.CreateHeader(&hdr)
	if err == nil {
		_, err = ew.Write(body)
	}
	return err
}

// redactDownload returns body redacted (read whole: one transcript's file) and what was
// replaced, or body as it is (nil counts) when c redacts nothing.
func (c *Config) redactDownload(body io.Reader) (io.Reader, redact.Counts, error) {
	if !c.redacts() {
		return body, nil, nil
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, nil, err
	}
	counts := redact.Counts{}
	out, err := c.redactBody(raw, counts)
	return bytes.NewReader(out), counts, err
}

// fileSum returns the size and SHA-256 of file.
func fileSum(file string) (int64, string, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, hex.EncodeToString(h.Sum(nil)), err
}
