package meet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	meetapi "google.golang.org/api/meet/v2"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
)

// What the Meet REST API v2 says of conferences and recordings
// (https://developers.google.com/workspace/meet/api/reference/rest/v2):
//
//   - conferenceRecords.list lists the conferences of a space the caller owns or took part in
//     ("If you're a meeting space owner or participant, you can call the get and list methods",
//     https://developers.google.com/workspace/meet/api/guides/conferences), newest first, at
//     most 100 a page, filtered on end_time (`end_time>="2024-01-01T00:00:00.000Z"`); an
//     ongoing conference has no end_time and is listed once it ended.
//   - A conference record "is deleted 30 days after the conference ends" (expireTime): a sweep
//     finds nothing older, whatever start_date says (Check warns of it).
//   - conferenceRecords.recordings.list gives a recording's state: STARTED ("An active
//     recording session has started"), ENDED ("hasn't been generated yet"), FILE_GENERATED
//     ("ready to download"), with driveDestination.file, "the fileId for the underlying MP4
//     file", to fetch with Drive's files.get?alt=media. A recording not generated yet waits for
//     a later sweep (userState.Waiting).
//   - "After a conference ends, Meet saves recordings and transcripts to the meeting
//     organizer's Google Drive" (https://developers.google.com/workspace/meet/api/guides/artifacts):
//     the Drive file's owner is the organizer, the recording's owner for mapping. "A user might
//     delete the recording file from Google Drive, but the unique name is still returned from
//     Meet": a file in the trash is left out; one Drive will not show the user (deleted for
//     good, or not shared with them) is listed unavailable, with the reason, unless another
//     user of the source read it (gdrive.Dedupe).

// retention is how long Meet keeps a conference record after the conference ends.
const retention = 30 * 24 * time.Hour

// stamp is the form of a timestamp in a filter (the reference's example).
const stamp = "2006-01-02T15:04:05.000Z"

// sweep lists user's conferences that ended since st.Since, less the overlap, leaving out
// those already taken, reads again those waiting for a file, and returns the recordings found
// and the next state.
func (s *Source) sweep(ctx context.Context, user string, st userState, now time.Time) ([]connectors.Recording, userState, error) {
	next := userState{Since: now, Done: map[string]time.Time{}}
	var out []connectors.Recording
	seen := map[string]bool{}
	visit := func(c waiting) error {
		seen[c.Name] = true
		recs, ready, err := s.recordings(ctx, user, c)
		if err != nil {
			return err
		}
		out = append(out, recs...)
		if ready {
			next.Done[c.Name] = c.End
		} else {
			next.Waiting = append(next.Waiting, c)
		}
		return nil
	}
	filter := fmt.Sprintf(`end_time>="%s"`, st.Since.Add(-s.cfg.Overlap).UTC().Format(stamp))
	for token := ""; ; {
		var page *meetapi.ListConferenceRecordsResponse
		err := s.retry(ctx, func() (err error) {
			call := s.meet[user].ConferenceRecords.List().Filter(filter).PageSize(100).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do()
			return err
		})
		if err != nil {
			return nil, st, fmt.Errorf("conferenceRecords.list %s: %w", filter, err)
		}
		for _, c := range page.ConferenceRecords {
			if _, done := st.Done[c.Name]; done || seen[c.Name] {
				continue
			}
			if err := visit(waiting{Name: c.Name, Space: c.Space, Start: parseTime(c.StartTime), End: parseTime(c.EndTime)}); err != nil {
				return nil, st, err
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	for _, w := range st.Waiting {
		if seen[w.Name] || now.After(w.End.Add(retention)) { // listed above, or deleted by Meet
			continue
		}
		if err := visit(w); err != nil && status(err) != http.StatusNotFound {
			return nil, st, err
		}
	}
	for name, end := range next.Done { // the next sweep lists nothing that ended before its overlap
		if end.Before(now.Add(-s.cfg.Overlap)) {
			delete(next.Done, name)
		}
	}
	for name, end := range st.Done {
		if !end.Before(now.Add(-s.cfg.Overlap)) {
			next.Done[name] = end
		}
	}
	return out, next, nil
}

// recordings returns the recordings of conference c whose files Meet has generated, read from
// Drive as user; ready is false while one is not generated yet.
func (s *Source) recordings(ctx context.Context, user string, c waiting) (out []connectors.Recording, ready bool, err error) {
	ready = true
	var meta map[string]string
	for token := ""; ; {
		var page *meetapi.ListRecordingsResponse
		err := s.retry(ctx, func() (err error) {
			call := s.meet[user].ConferenceRecords.Recordings.List(c.Name).PageSize(100).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			page, err = call.Do()
			return err
		})
		if err != nil {
			return nil, false, fmt.Errorf("recordings.list %s: %w", c.Name, err)
		}
		for _, r := range page.Recordings {
			if r.State != "FILE_GENERATED" {
				ready = false // STARTED or ENDED: a later sweep takes it
				continue
			}
			if r.DriveDestination == nil || r.DriveDestination.File == "" {
				continue
			}
			rec, err := s.drive.File(ctx, user, r.DriveDestination.File)
			switch {
			case errors.Is(err, gdrive.ErrTrashed): // thrown away by its owner: nothing to take
				continue
			case errors.Is(err, gdrive.ErrUnreadable):
				out = append(out, unreadable(user, c, r, err))
				continue
			case err != nil:
				return nil, false, fmt.Errorf("recording %s: %w", r.Name, err)
			}
			if meta == nil {
				meta = s.metadata(ctx, user, c)
			}
			out = append(out, describe(rec, c, r, meta))
		}
		if token = page.NextPageToken; token == "" {
			return out, ready, nil
		}
	}
}

// metadata is what the recordings of c propose for X-Metadata: the conference record, its
// space and meeting code (spaces.get; left out when Meet will not say), and its times.
func (s *Source) metadata(ctx context.Context, user string, c waiting) map[string]string {
	m := map[string]string{"conference_record": c.Name, "space": c.Space, "conference_start": c.Start.Format(time.RFC3339)}
	if !c.End.IsZero() {
		m["conference_end"] = c.End.Format(time.RFC3339)
	}
	if c.Space != "" {
		if sp, err := s.meet[user].Spaces.Get(c.Space).Context(ctx).Do(); err == nil && sp.MeetingCode != "" {
			m["meeting_code"] = sp.MeetingCode
		}
	}
	return m
}

// describe adds to rec, a recording's Drive file as the gdrive source describes it (its owner
// the organizer), what Meet says of it.
func describe(rec connectors.Recording, c waiting, r *meetapi.Recording, meta map[string]string) connectors.Recording {
	rec.Metadata = map[string]string{"recording": r.Name}
	for k, v := range meta {
		rec.Metadata[k] = v
	}
	rec.Fields["conference_record"], rec.Fields["space"], rec.Fields["recording"] = c.Name, c.Space, r.Name
	if rec.Owner != nil {
		rec.Fields["organizer"] = rec.Owner.Email
	}
	return rec
}

// unreadable is a generated recording whose Drive file user cannot read: unavailable, with the
// reason.
func unreadable(user string, c waiting, r *meetapi.Recording, err error) connectors.Recording {
	file := r.DriveDestination.File
	return connectors.Recording{ItemID: r.Name, Version: "unreadable-" + file, Name: "Meet recording " + c.Start.Format("2006-01-02 15:04") + ".mp4",
		ModTime: parseTime(r.EndTime), Link: r.DriveDestination.ExportUri, SourceExternalID: "gdrive:" + file,
		Fields: map[string]string{"subject": user, "target_id": file, "conference_record": c.Name, "space": c.Space, "recording": r.Name},
		Unavailable: fmt.Sprintf("Meet recording %s: its Drive file %s cannot be read as %s (%v): it was deleted from Drive, or is not "+
			"shared with them; add the meeting's organizer to users", r.Name, file, user, err)}
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t.UTC()
}
