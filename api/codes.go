package api

import "errors"

// Codes of the reference that callers branch on. Codes not listed here are still kept verbatim
// in Error.Code.
const (
	CodeUnsupportedFileFormat    = "unsupported_file_format"
	CodeFileTooSmall             = "file_too_small"
	CodeFilenameRequired         = "filename_required"
	CodeInsufficientBalance      = "insufficient_balance"
	CodeAPIAccessDenied          = "api_access_denied"
	CodeUploadScopeRequired      = "upload_scope_required"
	CodeReportsScopeRequired     = "reports_scope_required"
	CodeDeleteScopeRequired      = "delete_scope_required"
	CodeMembersScopeRequired     = "members_scope_required"
	CodeAPIKeyRequired           = "api_key_required"
	CodeAuthorRequiresAPIKey     = "author_requires_api_key"
	CodeTranscriptionLocked      = "transcription_locked"
	CodeMemberNotFound           = "member_not_found"
	CodeIdentityNotFound         = "identity_not_found"
	CodeUploadTimeout            = "upload_timeout"
	CodeIdempotencyConflict      = "idempotency_conflict"
	CodeTranscriptionFailed      = "transcription_failed"
	CodeIdentityConflict         = "identity_conflict"
	CodeLengthRequired           = "length_required"
	CodeFileSizeLimitExceeded    = "file_size_limit_exceeded"
	CodePromptNotFound           = "prompt_not_found"
	CodeTooManyReports           = "too_many_reports"
	CodeExternalIDInvalid        = "external_id_invalid"
	CodeExternalIDTooLong        = "external_id_too_long"
	CodeMetadataTooDeep          = "metadata_too_deep"
	CodeMetadataValueInvalid     = "metadata_value_invalid"
	CodeInvalidAuthor            = "invalid_author"
	CodeUnsupportedAuthorType    = "unsupported_author_type"
	CodeAuthorNotMember          = "author_not_member"
	CodeInvalidIdentity          = "invalid_identity"
	CodeTooManyConcurrentUploads = "too_many_concurrent_uploads"
	CodeTooManyQueuedFiles       = "too_many_queued_files"
	CodeUploadQuotaExceeded      = "upload_quota_exceeded"
	CodeDailyReportsQuota        = "daily_reports_quota_exceeded"
	CodeTooManyQueuedReports     = "too_many_queued_reports"
	CodeReportGenerationLimit    = "report_generation_limit"
)

// Values of a failed transcription's error_code (the reference's common ones).
const (
	ErrorFileCorrupted    = "FILE_CORRUPTED"
	ErrorFileNoAudio      = "FILE_NO_AUDIO"
	ErrorRecordingTooLong = "RECORDING_TOO_LONG"
	ErrorUploadIncomplete = "UPLOAD_INCOMPLETE"
)

// CodeOf returns the code of err: the upstream code of an *Error, or the code a
// *ValidationError stands for (the one the service would have answered). "" when neither.
func CodeOf(err error) string {
	if e := AsError(err); e != nil {
		return e.Code
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Code
	}
	return ""
}
