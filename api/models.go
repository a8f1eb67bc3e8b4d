package api

import (
	"encoding/json"
	"time"
)

// Transcription statuses.
const (
	StatusQueued              = "queued"
	StatusProcessing          = "processing"
	StatusCompleted           = "completed"
	StatusFailed              = "failed"
	StatusInsufficientBalance = "insufficient_balance"
)

// Terminal reports whether a transcription or report status is final.
func Terminal(status string) bool {
	switch status {
	case StatusCompleted, StatusFailed, StatusInsufficientBalance:
		return true
	}
	return false
}

// Author is the workspace member who owns a transcription.
type Author struct {
	ID    string  `json:"id"`
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

// ProjectRef is the project a transcription belongs to.
type ProjectRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Speaker is a diarized speaker.
type Speaker struct {
	// ID is the diarization identifier; it survives renames.
	ID   string  `json:"id"`
	Name *string `json:"name"`
}

// Topic is an AI-detected topic.
type Topic struct {
	Title string `json:"title"`
}

// Segment is one utterance of a completed transcript.
type Segment struct {
	// ID counts from 1 and is stable for one transcription.
	ID          int      `json:"id"`
	Start       *float64 `json:"start"`
	End         *float64 `json:"end"`
	SpeakerID   *string  `json:"speaker_id"`
	SpeakerName *string  `json:"speaker_name"`
	Text        string   `json:"text"`
}

// Report is an AI report (an element of prompt_results).
type Report struct {
	ID          string     `json:"id"`
	Slug        *string    `json:"slug"`
	Name        *string    `json:"name"`
	Status      string     `json:"status"`
	ErrorCode   *string    `json:"error_code"`
	Text        *string    `json:"text"`
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

// ReportRef is a report as the upload and report-request answers show it.
type ReportRef struct {
	ID     string `json:"id"`
	Slug   string `json:"slug"`
	Status string `json:"status"`
}

// Transcription is the full record of GET /transcriptions/{id}.
type Transcription struct {
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
	Project          *ProjectRef     `json:"project"`
	Author           Author          `json:"author"`
	Speakers         []Speaker       `json:"speakers"`
	Topics           []Topic         `json:"topics"`
	ExternalID       *string         `json:"external_id"`
	Metadata         json.RawMessage `json:"metadata"`
	Text             *string         `json:"text"`
	Segments         []Segment       `json:"segments"`
	PromptResults    []Report        `json:"prompt_results"`
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
}

// ListItem is an element of GET /transcriptions: no text, segments or reports.
type ListItem struct {
	ID string `json:"id"`
	// Status is present when the service sends it (the reference leaves it open).
	Status          string          `json:"status,omitempty"`
	Title           *string         `json:"title"`
	Summary         *string         `json:"summary"`
	Language        *string         `json:"language"`
	DurationSeconds *float64        `json:"duration_seconds"`
	Speakers        []Speaker       `json:"speakers"`
	ExternalID      *string         `json:"external_id"`
	Metadata        json.RawMessage `json:"metadata"`
	Author          Author          `json:"author"`
	Topics          []Topic         `json:"topics"`
	MediaType       *string         `json:"media_type"`
	Project         *ProjectRef     `json:"project"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// ListPage is one page of GET /transcriptions.
type ListPage struct {
	Items  []ListItem `json:"items"`
	Total  int        `json:"total"`
	Limit  int        `json:"limit"`
	Offset int        `json:"offset"`
}

// Template is a report template of GET /prompts.
type Template struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
	// Kind is builtin or custom.
	Kind string `json:"kind"`
	// Scope is workspace or personal for custom templates, nil for built-in ones.
	Scope       *string `json:"scope"`
	Description *string `json:"description"`
}

// Project is an element of GET /projects.
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Workspace is GET /workspace: balance, limits and the key's rights.
type Workspace struct {
	Workspace struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"workspace"`
	Balance struct {
		AvailableMinutes float64 `json:"available_minutes"`
	} `json:"balance"`
	Limits struct {
		MaxFileSizeMB    int `json:"max_file_size_mb"`
		Concurrency      int `json:"concurrency"`
		MaxDurationHours int `json:"max_duration_hours"`
		ReportsPerUpload int `json:"reports_per_upload"`
		ReportsPerDay    int `json:"reports_per_day"`
	} `json:"limits"`
	Key struct {
		Scopes    []string   `json:"scopes"`
		ExpiresAt *time.Time `json:"expires_at"`
	} `json:"key"`
}

// Identity is an external identity bound to a member.
type Identity struct {
	Provider   string `json:"provider"`
	ExternalID string `json:"external_id"`
}

// Member is a workspace member of GET /workspace/members.
type Member struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	Name       *string    `json:"name"`
	Role       string     `json:"role"`
	Identities []Identity `json:"identities"`
}

// UploadResult is the answer to an upload.
type UploadResult struct {
	UUID    string      `json:"uuid"`
	Status  string      `json:"status"`
	Reports []ReportRef `json:"reports"`
	// Replayed is true when the service answered 200: an earlier attempt with the same
	// Idempotency-Key had already succeeded, and this is its transcription.
	Replayed bool `json:"replayed"`
	// IdempotencyKey is the key every attempt carried.
	IdempotencyKey string `json:"idempotency_key"`
}
