package api

import (
	"errors"
	"fmt"
	"time"
)

// Error is an error answer of the API: the HTTP status and the upstream code, kept verbatim even
// when this package does not know it.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Code is the upstream code ("author_not_member"), empty when the answer carried none.
	Code string
	// Message is the upstream message.
	Message string
	// Detail holds the upstream detail object (for example "slug" for prompt_not_found).
	Detail map[string]any
	// RetryAfter is the Retry-After header, zero when absent.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	code := e.Code
	if code == "" {
		code = "no code"
	}
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, code)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, code, e.Message)
}

// Is matches another *Error by code, or by status when the target has no code, so that
// errors.Is(err, &api.Error{Code: "author_not_member"}) and errors.Is(err, api.ErrNotFound) work.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.Code != "" {
		return t.Code == e.Code && (t.Status == 0 || t.Status == e.Status)
	}
	return t.Status != 0 && t.Status == e.Status
}

// Sentinels for errors.Is.
var (
	// ErrNotFound matches any 404: absent, deleted, or in another workspace.
	ErrNotFound = &Error{Status: 404}
	// ErrUnauthorized matches any 401: missing, invalid, revoked or expired key.
	ErrUnauthorized = &Error{Status: 401}
	// ErrInsufficientBalance matches 402 insufficient_balance.
	ErrInsufficientBalance = &Error{Status: 402, Code: "insufficient_balance"}
)

// AsError returns the *Error inside err, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsCode reports whether err carries code: an upstream answer with it, or a refusal by this
// client's own checks of the same rule (see CodeOf).
func IsCode(err error, code string) bool {
	return code != "" && CodeOf(err) == code
}

// IsStatus reports whether err is an API answer with the HTTP status.
func IsStatus(err error, status int) bool {
	e := AsError(err)
	return e != nil && e.Status == status
}

// ValidationError is an input this client refused before sending a byte: a field breaking the
// reference's rules. Code is the code the API would answer with.
type ValidationError struct {
	// Field names the input: "X-Metadata", "X-External-Id", "X-Author", "speakers_count", ...
	Field string
	// Code is the API's code for the same mistake (metadata_too_deep, external_id_too_long, ...).
	Code string
	// Message says what is wrong and where.
	Message string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Field, e.Message, e.Code)
}
