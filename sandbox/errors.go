package sandbox

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is the body of every error answer: {"code": "...", "message": "...", "detail": {...}}.
type apiError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Detail  map[string]any `json:"detail"`
}

// writeError answers status with an error body. code is the reference's code, or our generic one
// for statuses the reference lists without a code (see README "Choices").
func writeError(w http.ResponseWriter, r *http.Request, status int, code, message string, detail map[string]any) {
	if info := infoFrom(r); info != nil {
		info.code = code
	}
	if detail == nil {
		detail = map[string]any{}
	}
	writeJSON(w, status, apiError{Code: code, Message: message, Detail: detail})
}

// writeRetryError is writeError with a Retry-After header in whole seconds (at least 1).
func writeRetryError(w http.ResponseWriter, r *http.Request, status int, code, message string, retryAfter int, detail map[string]any) {
	if retryAfter < 1 {
		retryAfter = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	if detail == nil {
		detail = map[string]any{}
	}
	detail["retry_after"] = retryAfter
	writeError(w, r, status, code, message, detail)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"code":"internal_error","message":"encoding failed","detail":{}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// refusal is an error answer decided inside a transaction and written after it, once the
// database connection is free again.
type refusal struct {
	status        int
	code, message string
	retryAfter    int // seconds; 0 sends no Retry-After
	detail        map[string]any
}

// write answers r with the refusal.
func (e *refusal) write(w http.ResponseWriter, r *http.Request) {
	if e.retryAfter > 0 {
		writeRetryError(w, r, e.status, e.code, e.message, e.retryAfter, e.detail)
		return
	}
	writeError(w, r, e.status, e.code, e.message, e.detail)
}

// internalError answers 500 for a failure of the sandbox itself (its database, its disk).
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, http.StatusInternalServerError, "internal_error", err.Error(), nil)
}
