package gdrive_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

const sales = "0ASales"

// salesFolder puts a folder "Calls" at the top of shared drive "Sales", with a.wav in it and
// b.wav in its subfolder, and elsewhere.wav beside it; it returns the folder's id.
func salesFolder(fake *gdrivetest.Server) string {
	fake.NameDrive(sales, "Sales")
	calls := fake.Folder("Calls", sales, "", sales)
	sub := fake.Folder("2026", calls, "", sales)
	fake.Put("a.wav", "audio/wav", calls, "", sales, []byte("a"))
	fake.Put("b.wav", "audio/wav", sub, "", sales, []byte("b"))
	fake.Put("elsewhere.wav", "audio/wav", sales, "", sales, []byte("not in the folder"))
	return calls
}

// TestFolderInSharedDriveIsListed (issue 29, point 7): a folder_id inside a shared drive, with
// no shared_drive_id, is listed (recursively) and followed through the changes feed, which
// Drive answers only when told that the caller handles shared drives (gdrivetest/list.go).
func TestFolderInSharedDriveIsListed(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := salesFolder(fake)
	src := newSource(t, fake, gdrive.Config{FolderID: calls})
	recs, cursor := list(t, src, "")
	if got := strings.Join(names(recs), ","); got != "a.wav,b.wav" {
		t.Fatalf("first listing of a shared-drive folder = %q, want a.wav,b.wav", got)
	}
	fake.Put("c.wav", "audio/wav", calls, "", sales, []byte("c"))
	recs, _ = list(t, src, cursor)
	if len(recs) != 1 || recs[0].Name != "c.wav" || recs[0].Fields["drive_id"] != sales {
		t.Fatalf("changes feed = %+v, want c.wav of drive %s", recs, sales)
	}
	rc, err := src.Open(context.Background(), recs[0])
	if err != nil {
		t.Fatalf("Open(c.wav) = %v", err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "c" {
		t.Errorf("downloaded %q, want c", b)
	}
}

// TestCursorFromBeforeListsTheFolderAgain: a cursor written before the source read which drive
// its folder is in (a changes token of the user's own feed) takes a full listing, which finds
// what that feed could not show.
func TestCursorFromBeforeListsTheFolderAgain(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := salesFolder(fake)
	src := newSource(t, fake, gdrive.Config{FolderID: calls})
	old := fmt.Sprintf(`{"users":{%q:{"token":"1","full_at":"2099-01-01T00:00:00Z","folders":[%q]}}}`, sam, calls)
	recs, _ := list(t, src, old)
	if got := strings.Join(names(recs), ","); got != "a.wav,b.wav" {
		t.Errorf("listing with a cursor from before = %q, want a.wav,b.wav", got)
	}
}

// TestCheckSaysWhatListingSees: Check names where the folder is and how it is listed: a
// shared drive's folder by corpora=drive, a My Drive folder by corpora=user.
func TestCheckSaysWhatListingSees(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := salesFolder(fake)
	mine := fake.Folder("Mine", gdrivetest.Root(sam), sam, "")
	for _, tc := range []struct {
		cfg  gdrive.Config
		want []string
	}{
		{gdrive.Config{FolderID: calls}, []string{`folder "Calls" (` + calls + `)`, `shared drive "Sales" (` + sales + `)`, "corpora=drive"}},
		{gdrive.Config{FolderID: calls, SharedDriveID: sales}, []string{`shared drive "Sales"`, "corpora=drive"}},
		{gdrive.Config{SharedDriveID: sales}, []string{`shared drive "Sales" (` + sales + `)`, "corpora=drive"}},
		{gdrive.Config{FolderID: mine}, []string{`folder "Mine" (` + mine + `)`, "My Drive", "corpora=user"}},
	} {
		lines, err := newSource(t, fake, tc.cfg).Check(context.Background())
		got := strings.Join(lines, "; ")
		if err != nil {
			t.Errorf("Check(folder %q, shared drive %q) = %v", tc.cfg.FolderID, tc.cfg.SharedDriveID, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("Check(folder %q, shared drive %q) = %q, want it to say %q", tc.cfg.FolderID, tc.cfg.SharedDriveID, got, w)
			}
		}
	}
}

// TestFolderOutsideItsSharedDriveIsRefused: a folder_id that is not in the shared_drive_id
// given would list nothing (corpora=drive keeps that drive's items); Check names the drive it
// is in and the fix, and List fails rather than finding nothing.
func TestFolderOutsideItsSharedDriveIsRefused(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := salesFolder(fake)
	fake.Put("x.wav", "audio/wav", "0AOther", "", "0AOther", []byte("x"))
	mine := fake.Folder("Mine", gdrivetest.Root(sam), sam, "")
	for _, tc := range []struct{ folder, in string }{{calls, `shared drive ` + sales}, {mine, "My Drive"}} {
		src := newSource(t, fake, gdrive.Config{FolderID: tc.folder, SharedDriveID: "0AOther"})
		_, err := src.Check(context.Background())
		problem, fix, ok := connectors.SetupFix(err)
		if !ok || !strings.Contains(problem, tc.in) || !strings.Contains(fix, "shared_drive_id") {
			t.Errorf("Check(folder in %s, shared_drive_id 0AOther) = %v; want the drive it is in and a fix naming shared_drive_id", tc.in, err)
		}
		if _, _, err := src.List(context.Background(), ""); err == nil || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("List(folder in %s, shared_drive_id 0AOther) = %v, want an error naming where it is", tc.in, err)
		}
	}
}

// TestCheckNamesTheFix: each setup problem Check finds comes with its fix (bridge doctor prints
// it as the fix).
func TestCheckNamesTheFix(t *testing.T) {
	fake := gdrivetest.Start(t)
	file := fake.Put("a.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("a"))
	for _, tc := range []struct {
		cfg     gdrive.Config
		fault   string
		problem string
		fix     string
	}{
		{gdrive.Config{FolderID: "nosuch"}, "", "not found", "share the folder with " + sam},
		{gdrive.Config{FolderID: file}, "", "not a folder", "folder_id"},
		{gdrive.Config{SharedDriveID: "0ANone"}, "", "0ANone", "member"},
		{gdrive.Config{FolderID: "nosuch"}, gdrivetest.ReasonDomainPolicy, "disabled Drive apps", "administrator"},
	} {
		if tc.fault != "" {
			fake.FailWith(tc.fault)
		}
		_, err := newSource(t, fake, tc.cfg).Check(context.Background())
		problem, fix, ok := connectors.SetupFix(err)
		if !ok || !strings.Contains(problem, tc.problem) || !strings.Contains(fix, tc.fix) {
			t.Errorf("Check(folder %q, shared drive %q, %s) = %v; want a problem naming %q with a fix naming %q", tc.cfg.FolderID,
				tc.cfg.SharedDriveID, tc.fault, err, tc.problem, tc.fix)
		}
	}
}

// TestOpenRefusalsAreClassified (issue 29, points 1 and 7): a spent download quota
// (downloadQuotaExceeded, about a day) and a refusal about the account (domainPolicy, a spent
// daily project quota) hold the job (connectors.Blocked); cannotDownloadFile is the file's
// own, for good: permanent, naming the reason and what it means.
func TestOpenRefusalsAreClassified(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	src := newSource(t, fake, gdrive.Config{FolderID: calls, MaxAttempts: 1})
	for _, tc := range []struct {
		reason   string
		download bool // refused at the download, its metadata served
		blocked  bool
		wait     string
		words    string
	}{
		{gdrivetest.ReasonDownloadQuota, true, true, "24h0m0s", "download quota"},
		{gdrivetest.ReasonCannotDownload, true, false, "", "cannotDownloadFile"},
		{gdrivetest.ReasonDomainPolicy, false, true, "24h0m0s", "disabled Drive apps"},
		{gdrivetest.ReasonDailyLimit, false, true, "24h0m0s", "Daily Limit Exceeded"},
	} {
		id := fake.Put(tc.reason+".wav", "audio/wav", calls, sam, "", []byte("a"))
		recs, _ := list(t, src, "")
		var rec connectors.Recording
		for _, r := range recs {
			if r.ItemID == id {
				rec = r
			}
		}
		if tc.download {
			fake.RefuseDownload(id, tc.reason)
		} else {
			fake.FailWith(tc.reason)
		}
		rc, err := src.Open(context.Background(), rec)
		if rc != nil {
			rc.Close()
		}
		wait := ""
		if d := connectors.BlockedWait(err); d > 0 {
			wait = d.String()
		}
		switch {
		case err == nil || errors.Is(err, connectors.ErrBlocked) != tc.blocked || errors.Is(err, connectors.ErrTransient):
			t.Errorf("Open refused with %s = %v (blocked %v), want blocked %v and not transient", tc.reason, err,
				errors.Is(err, connectors.ErrBlocked), tc.blocked)
		case wait != tc.wait || !strings.Contains(err.Error(), tc.words):
			t.Errorf("Open refused with %s = %v, held %q; want %q named and held %q", tc.reason, err, wait, tc.words, tc.wait)
		}
	}
	id := fake.Put("cannot.wav", "audio/wav", calls, sam, "", []byte("a"))
	fake.RefuseDownload(id, gdrivetest.ReasonCannotDownload)
	recs, _ := list(t, src, "")
	for _, r := range recs {
		if r.ItemID != id {
			continue
		}
		if _, err := src.Open(context.Background(), r); err == nil || !strings.Contains(err.Error(), "turned off download") {
			t.Errorf("Open of a file Drive will not let the account download = %v, want what cannotDownloadFile means", err)
		}
	}
}

// TestCheckWarnsOfATrashedFolder: a folder in the trash still reads, but nothing in it is
// listed (Drive trashes what is inside with it): Check says so as a warning, with its fix.
func TestCheckWarnsOfATrashedFolder(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	fake.Trash(calls)
	lines, err := newSource(t, fake, gdrive.Config{FolderID: calls}).Check(context.Background())
	var warned bool
	for _, l := range lines {
		if problem, fix, ok := connectors.ParseWarning(l); ok && strings.Contains(problem, "trash") && strings.Contains(fix, "restore") {
			warned = true
		}
	}
	if err != nil || !warned {
		t.Errorf("Check(trashed folder) = %q, %v; want a warning that it is in the trash, with the fix", lines, err)
	}
}
