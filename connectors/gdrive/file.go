package gdrive

import (
	"path"
	"slices"
	"strings"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/media"
)

// fileFields are the fields asked for each file; without fields Drive returns only id, name,
// mimeType and kind.
const fileFields = "id,name,mimeType,size,md5Checksum,headRevisionId,createdTime,modifiedTime,trashed," +
	"owners(emailAddress,permissionId,displayName),lastModifyingUser(emailAddress,permissionId,displayName),parents,driveId,webViewLink," +
	"shortcutDetails(targetId,targetMimeType)"

const changeFields = "nextPageToken,newStartPageToken,changes(removed,fileId,file(" + fileFields + "))"

// extensions gives a file name an extension from its MIME type when it has none (Meet names its
// recordings "Standup (2026-11-20 10:00 GMT+1)"): the service decides the format by it.
var extensions = map[string]string{
	"video/mp4": ".mp4", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a", "audio/m4a": ".m4a", "audio/mpeg": ".mp3",
	"audio/mp3": ".mp3", "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/ogg": ".ogg",
	"audio/opus": ".opus", "audio/flac": ".flac", "audio/x-flac": ".flac", "video/webm": ".webm", "audio/webm": ".webm",
	"video/quicktime": ".mov", "audio/aac": ".aac", "video/x-matroska": ".mkv", "video/x-msvideo": ".avi",
	"audio/amr": ".amr", "audio/x-ms-wma": ".wma", "video/mpeg": ".mpeg", "application/ogg": ".ogg",
}

// otherMedia are media types outside audio/ and video/ that Drive gives recordings.
var otherMedia = []string{"application/ogg", "application/x-ogg", "application/mxf", "application/vnd.rn-realmedia",
	"application/vnd.rn-realmedia-vbr", "application/vnd.ms-asf", "application/x-matroska"}

// generic are the types Drive gives files it could not identify (uploaded by a tool that sent
// no type, synced by a desktop client): such a file is a recording when its name has an
// extension the service takes, and its first bytes are checked before upload.
var generic = []string{"application/octet-stream", "binary/octet-stream", "application/x-binary", "application/binary",
	"application/unknown", "application/x-unknown", "application/download", "application/force-download"}

// listable reports whether a file (not a folder) may be a recording: its type is audio or
// video, or a generic one with a media extension in its name.
func listable(f *drive.File) bool {
	mime := strings.ToLower(strings.TrimSpace(f.MimeType))
	switch {
	case strings.HasPrefix(mime, "audio/"), strings.HasPrefix(mime, "video/"), slices.Contains(otherMedia, mime):
		return true
	case mime == "" || slices.Contains(generic, mime):
		return media.Kind(media.Ext(f.Name)) != ""
	}
	return false
}

// version is the content's MD5, else the head revision (files without a checksum), else the
// modification time.
func version(f *drive.File) string {
	switch {
	case f.Md5Checksum != "":
		return f.Md5Checksum
	case f.HeadRevisionId != "":
		return "rev-" + f.HeadRevisionId
	}
	return "mod-" + f.ModifiedTime
}

// recording describes f; subject is the user it was listed as.
func recording(f *drive.File, subject string) connectors.Recording {
	name := f.Name
	if ext, ok := extensions[f.MimeType]; ok && !strings.EqualFold(path.Ext(name), ext) && path.Ext(name) == "" {
		name += ext
	}
	mod, _ := time.Parse(time.RFC3339, f.ModifiedTime)
	link := f.WebViewLink
	if link == "" {
		link = "https://drive.google.com/file/d/" + f.Id + "/view"
	}
	r := connectors.Recording{ItemID: f.Id, Version: version(f), Name: name, Size: f.Size, ModTime: mod, Link: link,
		SourceExternalID: "gdrive:" + f.Id, Fields: map[string]string{"mime_type": f.MimeType}}
	r.DedupeKey = r.SourceExternalID + "@" + r.Version // one job per file version, whichever Google source finds it
	if subject != "" {
		r.Fields["subject"] = subject
	}
	if f.DriveId != "" {
		r.Fields["drive_id"] = f.DriveId
	}
	// The owner: owners[] in My Drive; shared-drive items have none, so the last modifier.
	switch {
	case len(f.Owners) > 0 && f.Owners[0].EmailAddress != "":
		r.Owner = &connectors.Owner{Provider: "gdrive", ID: f.Owners[0].PermissionId, Email: f.Owners[0].EmailAddress,
			Name: f.Owners[0].DisplayName}
	case f.LastModifyingUser != nil && f.LastModifyingUser.EmailAddress != "":
		r.Owner = &connectors.Owner{Provider: "gdrive", ID: f.LastModifyingUser.PermissionId, Email: f.LastModifyingUser.EmailAddress,
			Name: f.LastModifyingUser.DisplayName}
	}
	if r.Owner != nil {
		if r.Owner.ID == "" {
			r.Owner.ID = r.Owner.Email
		}
		r.Fields["owner_email"] = r.Owner.Email
	}
	return r
}

func wanted(c Config, name string) bool { return connectors.Wanted(c.Include, c.Exclude, name) }
