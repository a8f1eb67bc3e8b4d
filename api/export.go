package api

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/url"
)

// Export formats.
const (
	FormatMarkdown = "md"
	FormatText     = "txt"
	FormatJSON     = "json"
)

// Download is an exported file, streamed: the caller reads and closes Body.
type Download struct {
	// Body is the file's content.
	Body io.ReadCloser
	// Filename is the name the service gave in Content-Disposition.
	Filename string
	// ContentType is the media type of the file.
	ContentType string
	// Size is the Content-Length, -1 when unknown.
	Size int64
}

// Export returns transcription id as a file in format (md, txt or json; "" means md).
func (c *Client) Export(ctx context.Context, id, format string) (*Download, error) {
	q := url.Values{}
	if format != "" {
		q.Set("format", format)
	}
	resp, err := c.do(ctx, call{op: "export transcription " + id, method: "GET", path: "/transcriptions/" + url.PathEscape(id) + "/export", route: routeTranscriptionExport, query: q, class: classData, stream: true})
	if err != nil {
		return nil, err
	}
	return download(resp.RawResponse.Body, resp.Header().Get("Content-Disposition"), resp.Header().Get("Content-Type"), resp.RawResponse.ContentLength), nil
}

// ExportBulk returns a ZIP of 1 to 100 transcriptions in format. Unknown or foreign ids are
// skipped by the service: compare the archive's file count with len(ids).
func (c *Client) ExportBulk(ctx context.Context, ids []string, format string) (*Download, error) {
	if len(ids) < 1 || len(ids) > 100 {
		return nil, fmt.Errorf("bulk export: %w", &ValidationError{"ids", "invalid_ids", fmt.Sprintf("%d ids; 1 to 100 are allowed", len(ids))})
	}
	body := map[string]any{"ids": ids}
	if format != "" {
		body["format"] = format
	}
	resp, err := c.do(ctx, call{op: fmt.Sprintf("bulk export of %d transcriptions", len(ids)), method: "POST", path: "/transcriptions/export", route: routeBulkExport, body: body, class: classData, stream: true})
	if err != nil {
		return nil, err
	}
	return download(resp.RawResponse.Body, resp.Header().Get("Content-Disposition"), resp.Header().Get("Content-Type"), resp.RawResponse.ContentLength), nil
}

func download(body io.ReadCloser, disposition, contentType string, size int64) *Download {
	d := &Download{Body: body, ContentType: contentType, Size: size}
	if _, params, err := mime.ParseMediaType(disposition); err == nil {
		d.Filename = params["filename"]
	}
	return d
}
