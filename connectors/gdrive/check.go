package gdrive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/transcript-bridge/bridge/connectors"
)

// Check implements connectors.Checker: per subject, the credentials give a token, and the
// folder, shared drive or Meet folders (meet.go) can be read and listed as List will list it; the lines say where that is and how it is listed (scope.go). Each setup problem comes
// with its fix (connectors.NeedsSetup), each thing that will be missed as a
// connectors.Warning.
func (s *Source) Check(ctx context.Context) ([]string, error) {
	var lines []string
	for _, subject := range s.cfg.Subjects {
		u := &user{src: s, svc: s.users[subject], subject: subject}
		more, err := u.check(ctx)
		lines = append(lines, more...)
		if err != nil {
			return lines, err
		}
	}
	return lines, nil
}

func (u *user) check(ctx context.Context) ([]string, error) {
	who := u.subject
	if who == "" {
		who = "the credentials' own account"
	}
	about, err := u.svc.About.Get().Fields("user(emailAddress)").Context(ctx).Do()
	if err != nil {
		return nil, connectors.NeedsSetup(fmt.Errorf("as %s: cannot sign in: %w", who, err), signInFix(err, u.subject))
	}
	me := about.User.EmailAddress
	lines := []string{"signed in as " + me}
	var more []string
	switch {
	case u.src.cfg.FolderID != "":
		more, err = u.checkFolder(ctx, me)
	case u.src.cfg.SharedDriveID != "":
		more, err = u.checkDrive(ctx, me)
	default:
		more, err = u.checkMeet(ctx, who)
	}
	var se *connectors.SetupError
	switch {
	case errors.As(err, &se):
		return lines, connectors.NeedsSetup(fmt.Errorf("as %s: %w", who, se.Err), se.Fix)
	case accountFix(err) != "":
		return lines, connectors.NeedsSetup(fmt.Errorf("as %s: %w", who, err), accountFix(err))
	case err != nil:
		return lines, fmt.Errorf("as %s: %w", who, err)
	}
	return append(lines, more...), nil
}

// checkFolder reads folder_id, where it is, and the first page of its listing; me is the
// account signed in.
func (u *user) checkFolder(ctx context.Context, me string) ([]string, error) {
	f, driveID, err := u.locate(ctx)
	var mis *misplacedError
	switch {
	case errors.As(err, &mis):
		return nil, connectors.NeedsSetup(err, mis.fix())
	case status(err) == http.StatusNotFound:
		var ge *googleapi.Error
		errors.As(err, &ge)
		return nil, connectors.NeedsSetup(fmt.Errorf("folder %s: not visible: %w", u.src.cfg.FolderID, ge),
			"share the folder with "+me+" (Viewer is enough), or correct folder_id")
	case err != nil:
		return nil, err
	case f.MimeType != folderMime:
		return nil, connectors.NeedsSetup(fmt.Errorf("folder_id %s (%q) is not a folder but a %s", f.Id, f.Name, f.MimeType),
			"set folder_id to a folder's id: the last part of its address, drive.google.com/drive/folders/<id>")
	}
	in := where(driveID)
	if driveID != "" {
		in = u.driveName(ctx, driveID)
	}
	if err := u.probe(ctx, driveID, fmt.Sprintf("'%s' in parents and trashed = false", quote(f.Id))); err != nil {
		return nil, connectors.NeedsSetup(fmt.Errorf("folder %s in %s: listing: %w", f.Id, in, err), listFix(driveID, me))
	}
	lines := []string{fmt.Sprintf("folder %q (%s) in %s: %s", f.Name, f.Id, in, listing(driveID))}
	if f.Trashed {
		lines = append(lines, connectors.Warning(fmt.Sprintf("folder %q (%s) is in the trash: nothing in it is listed", f.Name, f.Id),
			"restore it from the trash, or set folder_id to another folder"))
	}
	return lines, nil
}

// checkDrive reads shared_drive_id and the first page of its listing; me is the account
// signed in.
func (u *user) checkDrive(ctx context.Context, me string) ([]string, error) {
	id := u.src.cfg.SharedDriveID
	d, err := u.svc.Drives.Get(id).Fields("id,name").Context(ctx).Do()
	if err != nil {
		return nil, connectors.NeedsSetup(fmt.Errorf("shared drive %s: not visible: %w", id, err), listFix(id, me)+", or correct shared_drive_id")
	}
	if err := u.probe(ctx, id, "trashed = false"); err != nil {
		return nil, connectors.NeedsSetup(fmt.Errorf("shared drive %s: listing: %w", id, err), listFix(id, me))
	}
	return []string{fmt.Sprintf("shared drive %q (%s), all of it: %s", d.Name, d.Id, listing(id))}, nil
}

// driveName names a shared drive for Check: `shared drive "Sales" (0A…)`, its id alone when
// drives.get refuses.
func (u *user) driveName(ctx context.Context, id string) string {
	d, err := u.svc.Drives.Get(id).Fields("id,name").Context(ctx).Do()
	if err != nil {
		return "shared drive " + id
	}
	return fmt.Sprintf("shared drive %q (%s)", d.Name, id)
}

// probe runs the first call of a listing of q in driveID, one item long.
func (u *user) probe(ctx context.Context, driveID, q string) error {
	return u.src.retry(ctx, func() error {
		_, err := listIn(u.svc.Files.List(), driveID).Q(q).PageSize(1).Fields("files(id)").Context(ctx).Do()
		return err
	})
}

// listFix is the fix of a listing refused in driveID.
func listFix(driveID, me string) string {
	if driveID == "" {
		return "share the folder with " + me + " (Viewer is enough)"
	}
	return "add " + me + " as a member of the shared drive (Viewer is enough)"
}

// signInFix is the fix of a failed sign-in as subject ("" for the credentials' own account).
func signInFix(err error, subject string) string {
	if fix := accountFix(err); fix != "" {
		return fix
	}
	if subject != "" {
		return "give the service account's client ID domain-wide delegation of " + drive.DriveReadonlyScope +
			" (Admin console: Security, API controls, Domain-wide delegation), and check that " + subject + " exists"
	}
	return "check credentials_file: a service-account key, or an authorized_user file whose refresh token is still valid"
}

// accountFix is the fix of a Drive refusal about the account or project (accountReasons), ""
// for others.
func accountFix(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	switch rs := reasons(ge); {
	case slices.Contains(rs, "domainPolicy"):
		return "ask a Google Workspace administrator to allow this app's client ID to use Drive (Admin console: Security, API controls)"
	case slices.Contains(rs, "dailyLimitExceeded"):
		return "raise or remove the Drive API's \"Queries per day\" cap in the Google Cloud console, or wait for it to renew"
	}
	return ""
}

// status is the HTTP status of the Drive error in err's chain, 0 when there is none.
func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}
