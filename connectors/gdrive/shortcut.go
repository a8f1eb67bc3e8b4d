package gdrive

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors"
)

// Shortcuts, as "Create a shortcut to a Drive file" documents them
// (https://developers.google.com/workspace/drive/api/guides/shortcuts): a file of type
// application/vnd.google-apps.shortcut whose shortcutDetails hold "A targetId pointing to the
// target file or folder" and "A targetMimeType indicating the MIME type for the target",
// copied when the shortcut was made (fileFields must ask for them: without fields Drive sends
// neither). Since 2026-07-23 Meet gives participants shortcuts to the organizer's recording
// (meet.go), so a shortcut is the recording it points to: the target's id, version, size and
// owner (the organizer), read by the subject that holds the shortcut. A participant's
// shortcut and the organizer's file are therefore one item and one job (and, across sources,
// one DedupeKey). "When the target is deleted, or when the current user loses access to the
// target, the user's shortcut pointing to the target breaks": the target then answers 404,
// and the shortcut is listed as unavailable with that reason (the bridge skips its job at
// discovery) unless another subject of the source reads the target (Dedupe).

const shortcutMime = "application/vnd.google-apps.shortcut"

// googleApps begins the types of Google's own files (Docs, folders, shortcuts), which are no
// recordings: a shortcut to one (a Meet transcript or notes, a folder) is not followed.
const googleApps = "application/vnd.google-apps."

// resolve appends the recordings of the shortcuts met while listing (u.shortcuts) to out.
func (u *user) resolve(ctx context.Context, out []connectors.Recording) ([]connectors.Recording, error) {
	shortcuts := u.shortcuts
	u.shortcuts = nil
	for _, s := range shortcuts {
		d := s.ShortcutDetails
		if d == nil || d.TargetId == "" || strings.HasPrefix(d.TargetMimeType, googleApps) {
			continue
		}
		var t *drive.File
		err := u.src.retry(ctx, func() (err error) {
			t, err = u.svc.Files.Get(d.TargetId).SupportsAllDrives(true).Fields(fileFields).Context(ctx).Do()
			return err
		})
		switch {
		case status(err) == http.StatusNotFound:
			if r := unreadable(s, u.subject); wanted(u.src.cfg, r.Name) {
				out = append(out, r)
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("shortcut %s: target %s: files.get: %w", s.Id, d.TargetId, err)
		case t.Trashed || !listable(t):
			continue
		}
		r := recording(t, u.subject)
		if !wanted(u.src.cfg, r.Name) {
			continue
		}
		r.Fields["shortcut_id"] = s.Id
		out = append(out, r)
	}
	return out, nil
}

// unreadable is the recording of shortcut s whose target subject cannot read: the shortcut
// itself, unavailable with the reason.
func unreadable(s *drive.File, subject string) connectors.Recording {
	d := s.ShortcutDetails
	name := s.Name
	if ext, ok := extensions[d.TargetMimeType]; ok && path.Ext(name) == "" {
		name += ext
	}
	who := subject
	if who == "" {
		who = "the credentials' own account"
	}
	mod, _ := time.Parse(time.RFC3339, s.ModifiedTime)
	r := connectors.Recording{ItemID: s.Id, Version: "target-" + d.TargetId, Name: name, ModTime: mod, Link: s.WebViewLink,
		SourceExternalID: "gdrive:" + s.Id,
		Fields:           map[string]string{"mime_type": d.TargetMimeType, "shortcut_id": s.Id, "target_id": d.TargetId},
		Unavailable: fmt.Sprintf("shortcut %q (%s) points to Drive file %s, which %s cannot read: its owner deleted it or "+
			"took the access away (share the file with %s again, or add its owner to subjects)", s.Name, s.Id, d.TargetId, who, who)}
	if subject != "" {
		r.Fields["subject"] = subject
	}
	return r
}

// Dedupe keeps one recording per file version of those several subjects listed (a
// participant's shortcut and the organizer's file: the organizer's own listing when there is
// one), and drops an unavailable recording of a Drive file one subject could not read (named
// in its Fields["target_id"]) when another subject read it. The meet source dedupes its users'
// listings with it too.
func Dedupe(recs []connectors.Recording) []connectors.Recording {
	type key struct{ item, version string }
	readable := map[string]bool{}
	pick := map[key]int{}
	for i, r := range recs {
		if r.Unavailable != "" {
			continue
		}
		readable[r.ItemID] = true
		k := key{r.ItemID, r.Version}
		j, seen := pick[k]
		if !seen || !ownListing(recs[j]) && ownListing(r) {
			pick[k] = i
		}
	}
	var out []connectors.Recording
	for i, r := range recs {
		switch {
		case r.Unavailable != "" && readable[r.Fields["target_id"]]:
		case r.Unavailable == "" && pick[key{r.ItemID, r.Version}] != i:
		default:
			out = append(out, r)
		}
	}
	return out
}

// ownListing reports whether r was listed by its owner.
func ownListing(r connectors.Recording) bool {
	return r.Owner != nil && r.Fields["subject"] != "" && strings.EqualFold(r.Owner.Email, r.Fields["subject"])
}
