package gdrive

import (
	"context"
	"fmt"

	"google.golang.org/api/drive/v3"
)

// Where a source lists, and how. Drive returns no shared-drive item to files.list or
// changes.list unless both supportsAllDrives=true and includeItemsFromAllDrives=true are sent
// ("If not present or set to false, then shared drive items are not returned": "Implement
// shared drive support", https://developers.google.com/workspace/drive/api/guides/enable-shareddrives),
// so a folder inside a shared drive listed as a My Drive one comes back empty, with 200, while
// files.get (with supportsAllDrives) finds it. The source therefore reads the folder's driveId
// first: a shared drive's folder is listed with corpora=drive and that driveId ("Queries all
// items in the specified shared drive"; the guide prefers it to allDrives "for efficiency")
// and followed through that drive's own changes feed (getStartPageToken and changes.list with
// driveId); a My Drive folder with corpora=user and the user's feed. supportsAllDrives=true
// goes on every call, as the guide asks of files.get, files.list and the changes calls.

// folderFields are what the configured folder is read with.
const folderFields = "id,name,mimeType,driveId,trashed"

// misplacedError is a folder_id that is not in the shared_drive_id given: listed with
// corpora=drive and that driveId, it would find nothing.
type misplacedError struct {
	folder *drive.File
	drive  string // shared_drive_id
}

func (e *misplacedError) Error() string {
	return fmt.Sprintf("folder_id %s (%q) is in %s, not in shared_drive_id %s: nothing would be listed", e.folder.Id, e.folder.Name,
		where(e.folder.DriveId), e.drive)
}

// fix says what to set.
func (e *misplacedError) fix() string {
	if e.folder.DriveId == "" {
		return "leave shared_drive_id out (a folder in My Drive is listed as such)"
	}
	return "set shared_drive_id to " + e.folder.DriveId + ", or leave it out (the folder's shared drive is read from the folder)"
}

// where names a drive: "shared drive <id>", or "My Drive" for "".
func where(driveID string) string {
	if driveID == "" {
		return "My Drive"
	}
	return "shared drive " + driveID
}

// locate returns the configured folder (nil when there is none: a whole shared drive, or Meet
// Recordings) and the shared drive to list ("" for My Drive): shared_drive_id, else the
// folder's own. A folder outside the shared_drive_id given is a *misplacedError.
func (u *user) locate(ctx context.Context) (*drive.File, string, error) {
	id := u.src.cfg.FolderID
	if id == "" {
		return nil, u.src.cfg.SharedDriveID, nil
	}
	var f *drive.File
	err := u.src.retry(ctx, func() (err error) {
		f, err = u.svc.Files.Get(id).SupportsAllDrives(true).Fields(folderFields).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("folder %s: files.get: %w", id, err)
	}
	if d := u.src.cfg.SharedDriveID; d != "" && f.DriveId != d {
		return f, "", &misplacedError{folder: f, drive: d}
	}
	return f, f.DriveId, nil
}

// listIn makes call list driveID ("" for My Drive), as said at the top of this file.
func listIn(call *drive.FilesListCall, driveID string) *drive.FilesListCall {
	call = call.SupportsAllDrives(true)
	if driveID == "" {
		return call.Corpora("user")
	}
	return call.Corpora("drive").DriveId(driveID).IncludeItemsFromAllDrives(true)
}

// changesIn makes call read driveID's changes feed ("" for the user's own).
func changesIn(call *drive.ChangesListCall, driveID string) *drive.ChangesListCall {
	call = call.SupportsAllDrives(true)
	if driveID == "" {
		return call
	}
	return call.DriveId(driveID).IncludeItemsFromAllDrives(true)
}

// listing describes how driveID is listed, for Check.
func listing(driveID string) string {
	if driveID == "" {
		return "listed with corpora=user, changes from the user's own feed"
	}
	return "listed with corpora=drive, driveId=" + driveID + ", supportsAllDrives and includeItemsFromAllDrives, changes from that drive's feed"
}
