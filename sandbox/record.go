package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// record is one transcription row.
type record struct {
	ID, WorkspaceID, KeyHash, CreatorID, AuthorID string
	ProjectID                                     sql.NullString
	Title, Filename, Status                       string
	ErrorCode                                     sql.NullString
	RequiredMinutes, AvailableMinutes             sql.NullFloat64
	Summary, Language                             sql.NullString
	RequestedLanguage                             string
	Duration                                      sql.NullFloat64
	MediaType                                     sql.NullString
	ProbeError                                    string
	ExternalID, Metadata                          sql.NullString
	Diarize                                       bool
	SpeakersCount                                 int
	AIMetadata                                    bool
	Text                                          sql.NullString
	Segments, Speakers                            string
	Topics                                        sql.NullString
	Reserved                                      float64
	MediaPath, Digest                             string
	Locked                                        bool
	CreatedAt, UpdatedAt, FinishAt                int64
}

const recordCols = `id, workspace_id, key_hash, creator_id, author_id, project_id, title, filename, status, error_code,
	required_minutes, available_minutes, summary, language, requested_language, duration_seconds, media_type, probe_error,
	external_id, metadata, diarize, speakers_count, ai_metadata, text, segments, speakers, topics, reserved_minutes,
	media_path, digest, locked, created_at, updated_at, finish_at`

func scanRecord(row interface{ Scan(...any) error }) (*record, error) {
	var t record
	err := row.Scan(&t.ID, &t.WorkspaceID, &t.KeyHash, &t.CreatorID, &t.AuthorID, &t.ProjectID, &t.Title, &t.Filename,
		&t.Status, &t.ErrorCode, &t.RequiredMinutes, &t.AvailableMinutes, &t.Summary, &t.Language, &t.RequestedLanguage,
		&t.Duration, &t.MediaType, &t.ProbeError, &t.ExternalID, &t.Metadata, &t.Diarize, &t.SpeakersCount,
		&t.AIMetadata, &t.Text, &t.Segments, &t.Speakers, &t.Topics, &t.Reserved, &t.MediaPath, &t.Digest, &t.Locked,
		&t.CreatedAt, &t.UpdatedAt, &t.FinishAt)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// loadRecord returns the transcription id of workspace wsID, or nil when there is none there:
// another workspace's id is indistinguishable from a missing one.
func loadRecord(ctx context.Context, q queryer, wsID, id string) (*record, error) {
	if !isUUID(id) {
		return nil, nil
	}
	t, err := scanRecord(q.QueryRowContext(ctx, `SELECT `+recordCols+` FROM transcriptions WHERE id = ? AND workspace_id = ?`, id, wsID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return t, err
}

// reportRow is one AI report.
type reportRow struct {
	ID, TranscriptionID, Slug, Name, Status string
	ErrorCode, Text                         sql.NullString
	Fails                                   bool
	CreatedAt                               int64
	CompletedAt                             sql.NullInt64
	FinishAt                                int64
}

func loadReports(ctx context.Context, q queryer, ids ...string) (map[string][]reportRow, error) {
	out := map[string][]reportRow{}
	for _, id := range ids {
		rows, err := q.QueryContext(ctx, `SELECT id, transcription_id, slug, name, status, error_code, text, fails, created_at,
			completed_at, finish_at FROM reports WHERE transcription_id = ? ORDER BY created_at, rowid`, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var rr reportRow
			if err := rows.Scan(&rr.ID, &rr.TranscriptionID, &rr.Slug, &rr.Name, &rr.Status, &rr.ErrorCode, &rr.Text,
				&rr.Fails, &rr.CreatedAt, &rr.CompletedAt, &rr.FinishAt); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = append(out[id], rr)
		}
		rows.Close()
	}
	return out, nil
}

// render views of a transcription, in the order the reference lists the fields.

type projectJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type speakerJSON struct {
	ID   string  `json:"id"`
	Name *string `json:"name"`
}

type topicJSON struct {
	Title string `json:"title"`
}

type segmentJSON struct {
	ID          int      `json:"id"`
	Start       *float64 `json:"start"`
	End         *float64 `json:"end"`
	SpeakerID   *string  `json:"speaker_id"`
	SpeakerName *string  `json:"speaker_name"`
	Text        string   `json:"text"`
}

type reportJSON struct {
	ID          string  `json:"id"`
	Slug        *string `json:"slug"`
	Name        *string `json:"name"`
	Status      string  `json:"status"`
	ErrorCode   *string `json:"error_code"`
	Text        *string `json:"text"`
	CreatedAt   string  `json:"created_at"`
	CompletedAt *string `json:"completed_at"`
}

// reportRef is the reduced report of upload and report-request responses.
type reportRef struct {
	ID     string `json:"id"`
	Slug   string `json:"slug"`
	Status string `json:"status"`
}

type fullJSON struct {
	ID               string          `json:"id"`
	Title            *string         `json:"title"`
	Status           string          `json:"status"`
	ErrorCode        *string         `json:"error_code"`
	RequiredMinutes  *float64        `json:"required_minutes"`
	AvailableMinutes *float64        `json:"available_minutes"`
	Summary          *string         `json:"summary"`
	Language         *string         `json:"language"`
	DurationSeconds  *float64        `json:"duration_seconds"`
	MediaType        *string         `json:"media_type"`
	Project          *projectJSON    `json:"project"`
	Author           authorJSON      `json:"author"`
	Speakers         []speakerJSON   `json:"speakers"`
	Topics           []topicJSON     `json:"topics"`
	ExternalID       *string         `json:"external_id"`
	Metadata         json.RawMessage `json:"metadata"`
	Text             *string         `json:"text"`
	Segments         []segmentJSON   `json:"segments"`
	PromptResults    []reportJSON    `json:"prompt_results"`
	CreatedAt        string          `json:"created_at"`
	UpdatedAt        string          `json:"updated_at"`
}

type listItemJSON struct {
	ID              string          `json:"id"`
	Title           *string         `json:"title"`
	Status          string          `json:"status"`
	Summary         *string         `json:"summary"`
	Language        *string         `json:"language"`
	DurationSeconds *float64        `json:"duration_seconds"`
	Speakers        []speakerJSON   `json:"speakers"`
	ExternalID      *string         `json:"external_id"`
	Metadata        json.RawMessage `json:"metadata"`
	Author          authorJSON      `json:"author"`
	Topics          []topicJSON     `json:"topics"`
	MediaType       *string         `json:"media_type"`
	Project         *projectJSON    `json:"project"`
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
}

func nstr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func nfloat(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	return &n.Float64
}

// lookups resolves author and project objects for rendering.
func (s *Server) author(ctx context.Context, q queryer, id string) (authorJSON, error) {
	var a authorJSON
	var name sql.NullString
	err := q.QueryRowContext(ctx, `SELECT id, email, name FROM members WHERE id = ?`, id).Scan(&a.ID, &a.Email, &name)
	a.Name = nstr(name)
	return a, err
}

func (s *Server) project(ctx context.Context, q queryer, id sql.NullString) (*projectJSON, error) {
	if !id.Valid {
		return nil, nil
	}
	var p projectJSON
	err := q.QueryRowContext(ctx, `SELECT id, name FROM projects WHERE id = ?`, id.String).Scan(&p.ID, &p.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &p, err
}

func (t *record) speakers() []speakerJSON {
	out := []speakerJSON{}
	_ = json.Unmarshal([]byte(t.Speakers), &out)
	return out
}

func (t *record) topics() []topicJSON {
	if !t.Topics.Valid {
		return nil
	}
	out := []topicJSON{}
	_ = json.Unmarshal([]byte(t.Topics.String), &out)
	return out
}

func (t *record) metadata() json.RawMessage {
	if !t.Metadata.Valid {
		return json.RawMessage("null")
	}
	return json.RawMessage(t.Metadata.String)
}

// full renders the full record of GET /transcriptions/{id}.
func (s *Server) full(ctx context.Context, q queryer, t *record) (*fullJSON, error) {
	a, err := s.author(ctx, q, t.AuthorID)
	if err != nil {
		return nil, err
	}
	proj, err := s.project(ctx, q, t.ProjectID)
	if err != nil {
		return nil, err
	}
	reps, err := loadReports(ctx, q, t.ID)
	if err != nil {
		return nil, err
	}
	segs := []segmentJSON{}
	if t.Status == "completed" {
		_ = json.Unmarshal([]byte(t.Segments), &segs)
	}
	title := t.Title
	f := &fullJSON{
		ID: t.ID, Title: &title, Status: t.Status, ErrorCode: nstr(t.ErrorCode),
		RequiredMinutes: nfloat(t.RequiredMinutes), AvailableMinutes: nfloat(t.AvailableMinutes),
		Summary: nstr(t.Summary), Language: nstr(t.Language), DurationSeconds: nfloat(t.Duration),
		MediaType: nstr(t.MediaType), Project: proj, Author: a, Speakers: t.speakers(), Topics: t.topics(),
		ExternalID: nstr(t.ExternalID), Metadata: t.metadata(), Text: nstr(t.Text), Segments: segs,
		PromptResults: []reportJSON{}, CreatedAt: fmtTime(t.CreatedAt), UpdatedAt: fmtTime(t.UpdatedAt),
	}
	for _, rr := range reps[t.ID] {
		slug, name := rr.Slug, rr.Name
		rj := reportJSON{ID: rr.ID, Slug: &slug, Name: &name, Status: rr.Status, ErrorCode: nstr(rr.ErrorCode),
			Text: nstr(rr.Text), CreatedAt: fmtTime(rr.CreatedAt)}
		if rr.CompletedAt.Valid {
			c := fmtTime(rr.CompletedAt.Int64)
			rj.CompletedAt = &c
		}
		f.PromptResults = append(f.PromptResults, rj)
	}
	return f, nil
}

func (s *Server) listItem(ctx context.Context, q queryer, t *record) (*listItemJSON, error) {
	a, err := s.author(ctx, q, t.AuthorID)
	if err != nil {
		return nil, err
	}
	proj, err := s.project(ctx, q, t.ProjectID)
	if err != nil {
		return nil, err
	}
	title := t.Title
	return &listItemJSON{
		ID: t.ID, Title: &title, Status: t.Status, Summary: nstr(t.Summary), Language: nstr(t.Language),
		DurationSeconds: nfloat(t.Duration), Speakers: t.speakers(), ExternalID: nstr(t.ExternalID),
		Metadata: t.metadata(), Author: a, Topics: t.topics(), MediaType: nstr(t.MediaType), Project: proj,
		CreatedAt: fmtTime(t.CreatedAt), UpdatedAt: fmtTime(t.UpdatedAt),
	}, nil
}
