package relay

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/redact"
)

// payload builds the message data: the event's details, the job id and, for full payloads, the
// transcription record as the API returns it (fetched now: the outbox holds ids only). A thin
// payload is the same for every endpoint and attempt: it is encoded once per event, envelope and
// all (kept a few minutes), and sent as it is.
func (r *Relay) payload(ctx context.Context, ep *Endpoint, d *bridge.Delivery) (any, error) {
	full := r.fetches(ep, d)
	if !full {
		if b, ok := r.thin.get(d.EventID, r.now()); ok {
			return b, nil
		}
	}
	data := map[string]any{}
	if len(d.Data) > 0 {
		if err := json.Unmarshal(d.Data, &data); err != nil {
			return nil, err
		}
	}
	hideLocalPaths(data)
	data["job_id"] = d.JobID
	if d.TranscriptionID != "" {
		data["transcription_id"] = d.TranscriptionID
	}
	if !full {
		b, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		body := encoded(envelopeOf(b, d.Type, d.EventAt))
		r.thin.put(d.EventID, body, r.now())
		return body, nil
	}
	t, err := r.records.get(ctx, r.API, d.EventID, d.TranscriptionID, r.now())
	if err != nil {
		return nil, err
	}
	if ep.redactor != nil { // a copy: t is shared with the other endpoints
		var counts redact.Counts
		t, counts = redact.Transcription(ep.redactor, t)
		data["redactions"] = counts
	}
	data["transcription"] = t // nil: deleted upstream since
	return data, nil
}

// fetches says whether d's payload to ep is full: the transcription record, fetched from the API.
func (r *Relay) fetches(ep *Endpoint, d *bridge.Delivery) bool {
	return d.TranscriptionID != "" && ep.Payload == PayloadFull && r.API != nil
}

// localPathRe finds what names a place on the bridge's own disk in a text: a file:// URL, an
// absolute path (two elements or more, after a space, quote, bracket or '=' or at the start) or a
// Windows drive path. Its first group is what precedes the path.
var localPathRe = regexp.MustCompile(`(^|[\s"'(\[=])(file://[^\s"')\]]+|(?:/[^/\s"':)\]]+){2,}|[A-Za-z]:\\[^\s"':)\]]+)`)

// hideLocalPaths keeps the bridge's disk out of an event's data: a source link that is a
// file:// URL or a local path is dropped (a localdir source's), and local paths in the bridge's
// own texts (reason, error: an os error names the file) are cut to their last element
// ("…/name.mp4"). What the user's templates produced (the transcription's external id and
// metadata, an export's location) is left as it is.
func hideLocalPaths(data map[string]any) {
	if src, ok := data["source"].(map[string]any); ok {
		if link, ok := src["link"].(string); ok && link != "" && localLink(link) {
			delete(src, "link")
		}
	}
	for _, k := range []string{"reason", "error"} {
		if s, ok := data[k].(string); ok {
			data[k] = localPathRe.ReplaceAllStringFunc(s, func(m string) string {
				g := localPathRe.FindStringSubmatch(m)
				p := strings.TrimPrefix(g[2], "file://")
				if i := strings.LastIndexAny(p, `/\`); i >= 0 {
					p = p[i+1:]
				}
				return g[1] + "…/" + p
			})
		}
	}
}

// localLink reports whether link points at the local disk: a file: URL or a path.
func localLink(link string) bool {
	if u, err := url.Parse(link); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return strings.EqualFold(u.Scheme, "file")
	}
	return true // no scheme (or a drive letter): a path
}
