package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

func init() { Register("tracking", Tracking) }

// TrackingPoll is the tracker's default poll interval (bridge run's poll_interval), at which
// the tracking figures are taken.
const TrackingPoll = 5 * time.Second

// fullPollEvery is how often a poll also lists the queued transcriptions (the tracker's check
// for deletions upstream).
const fullPollEvery = 10 * time.Minute

// Tracking follows 1,000 transcriptions in flight (100 with env.Short) and reports the API
// requests per minute the tracker spends at the default 5 s poll while they wait, against
// polling one GET per transcription, and the detection lag (from the service finishing a
// transcription to its job done) at that poll, p50 and p95. It fails when the sandbox, the
// store or a tracking poll fails.
func Tracking(ctx context.Context, env Env) (*Report, error) {
	n := 1000
	if env.Short {
		n = 100
	}
	s, err := MeasureTracking(ctx, env, n, TrackingPoll)
	if err != nil {
		return nil, err
	}
	naive := float64(n) * float64(time.Minute) / float64(TrackingPoll)
	return &Report{Results: []Result{
		Goal{MaxValue: Ref(60)}.Figure("tracking_requests", s.PerMinute, "requests/min", &naive, "one GET per transcription per poll"),
		Goal{MaxValue: Ref(10)}.Figure("tracking_lag_p95", s.Lag(0.95).Seconds(), "s", nil, ""),
		Goal{}.Figure("tracking_lag_p50", s.Lag(0.50).Seconds(), "s", nil, ""),
	}}, nil
}

// TrackingStats is what MeasureTracking measured.
type TrackingStats struct {
	// FullPoll is the requests of a poll that also lists the queued transcriptions (the first,
	// then one every 10 minutes); Poll those of any other, PollTime how long it took.
	FullPoll, Poll int64
	PollTime       time.Duration
	// PerMinute is the requests per minute at the poll interval measured with.
	PerMinute float64
	// GETsPerTranscription is the GETs of one transcription per finished transcription.
	GETsPerTranscription float64
	// Lags are the detection lags, shortest first.
	Lags []time.Duration
}

// Lag returns quantile q (0.95) of the detection lags (0 when there are none).
func (s *TrackingStats) Lag(q float64) time.Duration {
	return quantile(s.Lags, q)
}

// MeasureTracking measures, with n transcriptions in flight, the requests of a tracking poll
// while nothing changes (on a plan processing 2 at a time, so n-2 wait queued, at a time
// scale that finishes none meanwhile), then the detection lag at poll with all n finishing
// within seconds (bridge run --once). It fails when the sandbox, the store or a poll fails, or
// no job finishes.
func MeasureTracking(ctx context.Context, env Env, n int, poll time.Duration) (*TrackingStats, error) {
	var s TrackingStats
	env.Logf("tracking: %d uploads, 2 processing at a time", n)
	f, err := StartInFlight(ctx, env.Dir, n, 2, 1000)
	if err != nil {
		return nil, err
	}
	before, _ := f.Requests()
	if err := f.Pipeline.Track(ctx); err != nil { // the first poll also lists the queued ones
		f.Close()
		return nil, fmt.Errorf("bench tracking: track: %w", err)
	}
	after, _ := f.Requests()
	s.FullPoll = after - before
	start := time.Now()
	err = f.Pipeline.Track(ctx)
	s.PollTime = time.Since(start)
	last, _ := f.Requests()
	s.Poll = last - after
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("bench tracking: track: %w", err)
	}
	s.PerMinute = float64(s.Poll)*float64(time.Minute)/float64(poll) + float64(s.FullPoll)*float64(time.Minute)/float64(fullPollEvery)
	env.Logf("tracking: full poll %d requests, poll %d requests in %v", s.FullPoll, s.Poll, s.PollTime.Round(time.Millisecond))

	env.Logf("tracking: %d uploads, all processing at once; run --once at a %v poll", n, poll)
	if f, err = StartInFlight(ctx, env.Dir, n, n, 1); err != nil {
		return nil, err
	}
	defer f.Close()
	_, getsBefore := f.Requests()
	runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := f.Pipeline.Run(runCtx, bridge.RunOptions{Once: true, StepInterval: 50 * time.Millisecond, PollInterval: poll}); err != nil {
		return nil, fmt.Errorf("bench tracking: run: %w", err)
	}
	_, gets := f.Requests()
	s.GETsPerTranscription = float64(gets-getsBefore) / float64(n)
	if s.Lags, err = detectionLags(ctx, f); err != nil {
		return nil, err
	}
	return &s, nil
}

// detectionLags returns, shortest first, how long after the service finished each
// transcription its job was done. It fails when the listing or the store does, or no job is done.
func detectionLags(ctx context.Context, f *InFlight) ([]time.Duration, error) {
	finished := map[string]time.Time{}
	for it, err := range f.API.All(ctx, api.ListParams{}) {
		if err != nil {
			return nil, fmt.Errorf("bench tracking: list: %w", err)
		}
		finished[it.ID] = it.UpdatedAt
	}
	jobs, err := f.Store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateDone}})
	if err != nil {
		return nil, fmt.Errorf("bench tracking: jobs: %w", err)
	}
	var lags []time.Duration
	for _, j := range jobs {
		if t, ok := finished[j.TranscriptionID]; ok {
			lags = append(lags, j.UpdatedAt.Sub(t))
		}
	}
	if len(lags) == 0 {
		return nil, fmt.Errorf("bench tracking: no job finished")
	}
	slices.Sort(lags)
	return lags, nil
}
