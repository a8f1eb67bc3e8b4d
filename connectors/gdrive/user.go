package gdrive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors"
)

const folderMime = "application/vnd.google-apps.folder"

// mediaQuery keeps audio and video files, files of a generic type (whose names decide, see
// listable), shortcuts (to such files: shortcut.go), and folders to descend into.
var mediaQuery = func() string {
	q := "(mimeType contains 'audio/' or mimeType contains 'video/'"
	for _, m := range append(slices.Clone(otherMedia), generic...) {
		q += " or mimeType = '" + m + "'"
	}
	return q + " or mimeType = '" + shortcutMime + "' or mimeType = '" + folderMime + "')"
}()

// user syncs one subject's view.
type user struct {
	src     *Source
	svc     *drive.Service
	subject string
	state   userState
	// shortcuts are the shortcuts met while listing, resolved once it is done (shortcut.go).
	shortcuts []*drive.File
}

func (u *user) list(ctx context.Context) ([]connectors.Recording, error) {
	now := u.src.cfg.Now()
	if u.state.Token == "" || !u.state.Located || now.Sub(u.state.FullAt) >= u.src.cfg.FullEvery {
		return u.full(ctx, now)
	}
	return u.changes(ctx)
}

// full lists everything in scope, in the drive the folder is in (locate). The changes token is
// taken first, so a change made during the listing is seen again by the next incremental pass
// rather than lost.
func (u *user) full(ctx context.Context, now time.Time) ([]connectors.Recording, error) {
	_, driveID, err := u.locate(ctx)
	if err != nil {
		return nil, err
	}
	token, err := u.startToken(ctx, driveID)
	if err != nil {
		return nil, err
	}
	var out []connectors.Recording
	roots, err := u.roots(ctx)
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 && u.src.cfg.SharedDriveID != "" { // the whole shared drive
		err = u.pages(ctx, driveID, "trashed = false and "+mediaQuery, func(f *drive.File) {
			if f.MimeType != folderMime {
				out = u.keep(out, f)
			}
		})
		if err != nil {
			return nil, err
		}
		u.state = userState{Token: token, FullAt: now, Drive: driveID, Located: true}
		return u.resolve(ctx, out)
	}
	folders := map[string]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if folders[id] {
			continue
		}
		folders[id] = true
		err := u.pages(ctx, driveID, fmt.Sprintf("'%s' in parents and trashed = false and %s", quote(id), mediaQuery), func(f *drive.File) {
			if f.MimeType == folderMime {
				queue = append(queue, f.Id)
			} else {
				out = u.keep(out, f)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	u.state = userState{Token: token, FullAt: now, Folders: sortedKeys(folders), Drive: driveID, Located: true,
		Root: u.state.Root, Legacy: u.state.Legacy}
	return u.resolve(ctx, out)
}

// roots are the folders to descend from: the configured one, or the subject's Meet folders
// (meet.go); none for a whole shared drive.
func (u *user) roots(ctx context.Context) ([]string, error) {
	switch {
	case u.src.cfg.FolderID != "":
		return []string{u.src.cfg.FolderID}, nil
	case u.src.cfg.MeetRecordings:
		return u.meetRoots(ctx)
	}
	return nil, nil
}

// changes reads the feed since the stored token (the drive's, for a shared drive) and keeps
// what is in scope: a file in a known folder (or anywhere in the shared drive). A folder moved
// into scope is listed at once.
func (u *user) changes(ctx context.Context) ([]connectors.Recording, error) {
	folders := map[string]bool{}
	for _, id := range u.state.Folders {
		folders[id] = true
	}
	whole := u.src.cfg.SharedDriveID != "" && u.src.cfg.FolderID == ""
	var out []connectors.Recording
	var newFolders []string
	token := u.state.Token
	for {
		var page *drive.ChangeList
		err := u.src.retry(ctx, func() (err error) {
			page, err = changesIn(u.svc.Changes.List(token), u.state.Drive).PageSize(1000).IncludeRemoved(false).Fields(changeFields).
				Context(ctx).Do()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("changes.list: %w", err)
		}
		for _, c := range page.Changes {
			f := c.File
			if c.Removed || f == nil || f.Trashed || !(whole || slices.ContainsFunc(f.Parents, func(p string) bool { return folders[p] }) ||
				u.newMeetFolder(f)) {
				continue
			}
			if f.MimeType == folderMime {
				if !folders[f.Id] {
					folders[f.Id] = true
					newFolders = append(newFolders, f.Id)
				}
				continue
			}
			out = u.keep(out, f)
		}
		if page.NewStartPageToken != "" {
			token = page.NewStartPageToken
			break
		}
		token = page.NextPageToken
	}
	for len(newFolders) > 0 { // files moved in with a folder bring no changes of their own
		id := newFolders[0]
		newFolders = newFolders[1:]
		err := u.pages(ctx, u.state.Drive, fmt.Sprintf("'%s' in parents and trashed = false and %s", quote(id), mediaQuery), func(f *drive.File) {
			if f.MimeType != folderMime {
				out = u.keep(out, f)
			} else if !folders[f.Id] {
				folders[f.Id] = true
				newFolders = append(newFolders, f.Id)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	u.state.Token, u.state.Folders = token, sortedKeys(folders)
	return u.resolve(ctx, out)
}

// startToken is where driveID's changes feed ("" for the user's own) is now.
func (u *user) startToken(ctx context.Context, driveID string) (string, error) {
	var tok *drive.StartPageToken
	err := u.src.retry(ctx, func() (err error) {
		call := u.svc.Changes.GetStartPageToken().SupportsAllDrives(true).Context(ctx)
		if driveID != "" {
			call = call.DriveId(driveID)
		}
		tok, err = call.Do()
		return err
	})
	if err != nil {
		return "", fmt.Errorf("changes.getStartPageToken: %w", err)
	}
	return tok.StartPageToken, nil
}

// pages runs files.list of q in driveID ("" for My Drive) over every page.
func (u *user) pages(ctx context.Context, driveID, q string, each func(*drive.File)) error {
	token := ""
	for {
		var page *drive.FileList
		err := u.src.retry(ctx, func() (err error) {
			call := listIn(u.svc.Files.List(), driveID).Q(q).PageSize(1000).Fields("nextPageToken,files(" + fileFields + ")").Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do()
			return err
		})
		if err != nil {
			return fmt.Errorf("files.list %q: %w", q, err)
		}
		for _, f := range page.Files {
			each(f)
		}
		if token = page.NextPageToken; token == "" {
			return nil
		}
	}
}

// keep appends f's recording when it may be a recording (see listable) and its name passes the
// globs; a shortcut waits to be resolved (u.shortcuts).
func (u *user) keep(out []connectors.Recording, f *drive.File) []connectors.Recording {
	if f.MimeType == shortcutMime {
		u.shortcuts = append(u.shortcuts, f)
		return out
	}
	if !listable(f) {
		return out
	}
	r := recording(f, u.subject)
	if !wanted(u.src.cfg, r.Name) {
		return out
	}
	return append(out, r)
}

func quote(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
