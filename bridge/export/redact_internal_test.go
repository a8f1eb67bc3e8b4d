package export

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedactZipNames: entries named after titles lose what is redacted, keep their extension,
// and stay unique (" (2)" before the extension) when redaction makes two names equal.
func TestRedactZipNames(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.zip")
	f, _ := os.Create(file)
	w := zip.NewWriter(f)
	for _, name := range []string{"Call with a@x.com.md", "Call with b@y.org.md", "Weekly.md"} {
		e, _ := w.Create(name)
		io.WriteString(e, "# "+name+"\n\nmail b@y.org\n")
	}
	w.Close()
	f.Close()
	c := Config{Name: "n", Schedule: "0 2 * * *", Destination: dir, Redact: []string{"email"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	counts, err := c.redactZip(folder(dir), file)
	if err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, e := range z.File {
		names = append(names, e.Name)
	}
	if want := []string{"Call with [email].md", "Call with [email] (2).md", "Weekly.md"}; !slices.Equal(names, want) {
		t.Errorf("redactZip names = %q, want %q", names, want)
	}
	if len(counts) != 3 || counts[0]["email"] != 2 || counts[2]["email"] != 1 {
		t.Errorf("redactZip counts = %v, want 2, 2, 1 e-mail addresses", counts)
	}
}
