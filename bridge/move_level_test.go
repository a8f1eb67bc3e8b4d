package bridge

import (
	"log/slog"
	"testing"
)

// TestMoveLevel: a job's move is logged at WARN when something went wrong (held, skipped,
// failed, resubmit, a retry, reports refused, an author refused), at DEBUG when a job is only
// rescheduled in its state, at INFO otherwise.
func TestMoveLevel(t *testing.T) {
	tests := []struct {
		from, to    State
		was, reason string
		want        slog.Level
	}{
		{StateDiscovered, StateReady, "", "", slog.LevelInfo},
		{StateReady, StateUploading, "", "upload attempt 1", slog.LevelInfo},
		{StateUploading, StateQueued, "upload attempt 1", "uploaded", slog.LevelInfo},
		{StateQueued, StateDone, "", "transcript and reports ready", slog.LevelInfo},
		{StateUploading, StateUploading, "upload attempt 1", "will retry with the same key: 503", slog.LevelWarn},
		{StateUploading, StateUploading, "will retry with the same key: 503", "will retry with the same key: 503", slog.LevelWarn},
		{StateUploading, StateUploading, "", reasonSourceRetry + " in 30s: zoom download: 503", slog.LevelWarn},
		{StateUploading, StateUploading, "will retry with the same key: 503", "upload attempt 2", slog.LevelInfo},
		{StateDiscovered, StateHeld, "", "unmapped: no member matches the owner", slog.LevelWarn},
		{StateReady, StateHeld, "", reasonNoMinutes, slog.LevelWarn},
		{StateHeld, StateHeld, reasonNoMinutes, "", slog.LevelDebug},
		{StateHeld, StateHeld, "unmapped: a", "unmapped: a", slog.LevelDebug},
		{StateHeld, StateHeld, "unmapped: a", "author_not_member: b", slog.LevelWarn},
		{StateResubmit, StateResubmit, "insufficient_balance", "", slog.LevelDebug},
		{StateDiscovered, StateSkipped, "", "unsupported extension .txt", slog.LevelWarn},
		{StateProcessing, StateFailed, "", "transcription_failed", slog.LevelWarn},
		{StateProcessing, StateResubmit, "", "insufficient_balance", slog.LevelWarn},
		{StateUploading, StateDiscovered, "", reasonRemap + ": author_not_member", slog.LevelWarn},
		{StateTranscribed, StateTranscribed, "", reasonReportsWait + ": 429", slog.LevelWarn},
		{StateTranscribed, StateDone, "", reasonReportsNotMade + ": report_generation_limit", slog.LevelWarn},
		{StateHeld, StateReady, "unmapped: a", "", slog.LevelInfo},
	}
	for _, tc := range tests {
		if got := moveLevel(tc.from, tc.to, tc.was, tc.reason); got != tc.want {
			t.Errorf("moveLevel(%s → %s, %q → %q) = %v, want %v", tc.from, tc.to, tc.was, tc.reason, got, tc.want)
		}
	}
}
