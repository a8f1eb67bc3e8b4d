package connectors

import "time"

// Recording is what a source found: one version of one item. The source owns it; mapping reads
// it to decide the upload headers and the bridge stores it as a job (its JSON is the job's
// stored recording, so the field names stay).
type Recording struct {
	// Source is the configured source name.
	Source string `json:"source"`
	// ItemID identifies the item within the source (a path, a file id, a meeting id).
	ItemID string `json:"item_id"`
	// Version changes whenever the content may have changed (size and mtime, an etag, a
	// revision); each version is its own job.
	Version string `json:"version"`
	// Name is the file name sent to the service (its extension decides the format).
	Name string `json:"name"`
	// Size is the byte count; 0 when the source does not know it before download.
	Size int64 `json:"size"`
	// ModTime is when the item last changed at the source.
	ModTime time.Time `json:"mod_time"`
	// Link points people to the item at its source, when there is one.
	Link string `json:"link,omitempty"`
	// Owner identifies the external user who owns the item, for author mapping.
	Owner *Owner `json:"owner,omitempty"`
	// SourceExternalID is the source's own external id for the item
	// ("s3:<bucket>/<key>@<etag>", "gdrive:<file id>"); the mapping sends it as X-External-Id
	// unless a template says otherwise.
	SourceExternalID string `json:"source_external_id,omitempty"`
	// DedupeKey, when set, names the content itself rather than its place in this source, so
	// that sources reaching the same content make one job of it: a Drive file's
	// "gdrive:<file id>@<version>", whether a gdrive source lists it (or a shortcut to it) or a
	// meet source finds it as a Meet recording. The store keeps one job per key, whichever
	// source finds it first; the others' sightings are no-ops, as a second sighting in one
	// source is.
	DedupeKey string `json:"dedupe_key,omitempty"`
	// Fields are the source's own fields (S3 x-amz-meta-*, Drive properties), for templates as
	// {{.Fields.name}}.
	Fields map[string]string `json:"fields,omitempty"`
	// Unavailable, when set, says why the source cannot deliver this version and what would let it
	// (an S3 object in an archive storage class, which S3 refuses to read until restored): the
	// bridge records its job skipped with this reason at discovery, and never opens it.
	Unavailable string `json:"unavailable,omitempty"`
	// Metadata is what the source proposes for X-Metadata (Zoom: topic, meeting id, start time,
	// duration, host); the source's metadata templates add to it and win on a clash.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Owner is what a source says about the external user a recording belongs to.
type Owner struct {
	// Provider is the identity provider (zoom, gdrive, ...).
	Provider string `json:"provider"`
	// ID is the user's id at the provider.
	ID string `json:"id"`
	// Email is the user's e-mail when the source gives it.
	Email string `json:"email,omitempty"`
	// Name is the user's display name when the source gives it (Drive's displayName).
	Name string `json:"name,omitempty"`
}
