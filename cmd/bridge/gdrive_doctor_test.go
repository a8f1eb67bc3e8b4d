package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// TestDoctorDriveSetup (issue 29, point 7): bridge doctor says where a Drive source lists and
// how (a folder in a shared drive: corpora=drive), fails a folder outside the shared_drive_id
// given with its fix, and warns of a folder in the trash.
func TestDoctorDriveSetup(t *testing.T) {
	fake := gdrivetest.Start(t)
	const sam = "sam@acme.test"
	fake.NameDrive("0ASales", "Sales")
	calls := fake.Folder("Calls", "0ASales", "", "0ASales")
	trashed := fake.Folder("Old", gdrivetest.Root(sam), sam, "")
	fake.Trash(trashed)
	dir := t.TempDir()
	creds := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(creds, fake.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		options, status, detail, fix string
	}{
		{"folder_id: " + calls, "ok", `folder "Calls" (` + calls + `) in shared drive "Sales" (0ASales): listed with corpora=drive`, ""},
		{"folder_id: " + calls + ", shared_drive_id: 0AOther", "FAIL", "is in shared drive 0ASales, not in shared_drive_id 0AOther",
			"set shared_drive_id to 0ASales"},
		{"folder_id: " + trashed, "warn", "is in the trash", "restore it from the trash"},
	} {
		config := fmt.Sprintf("store: {dsn: %q}\nsources: [{name: drive, type: gdrive, credentials_file: %q, subject: %s, endpoint: %q, %s}]\n",
			filepath.Join(dir, "bridge.db"), creds, sam, fake.URL, tc.options)
		r, _ := doctorJSON(t, dir, config)
		c := r.find(t, tc.status, "source drive")
		if !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Fix, tc.fix) {
			t.Errorf("doctor with %s: %s %q (fix %q), want it to say %q (fix %q)", tc.options, c.Status, c.Detail, c.Fix, tc.detail, tc.fix)
		}
	}
}
