package zoom

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// meeting is Zoom's meeting object, as recordings lists and webhooks carry it.
type meeting struct {
	UUID           string `json:"uuid"`
	ID             int64  `json:"id"`
	AccountID      string `json:"account_id"`
	HostID         string `json:"host_id"`
	HostEmail      string `json:"host_email"`
	Topic          string `json:"topic"`
	StartTime      string `json:"start_time"`
	Timezone       string `json:"timezone"`
	Duration       int    `json:"duration"`
	RecordingFiles []file `json:"recording_files"`
}

// file is one of a meeting's recording_files.
type file struct {
	ID             string `json:"id"`
	MeetingID      string `json:"meeting_id"`
	RecordingStart string `json:"recording_start"`
	RecordingEnd   string `json:"recording_end"`
	FileType       string `json:"file_type"`
	FileExtension  string `json:"file_extension"`
	FileSize       int64  `json:"file_size"`
	DownloadURL    string `json:"download_url"`
	PlayURL        string `json:"play_url"`
	Status         string `json:"status"`
	RecordingType  string `json:"recording_type"`
}

// pick returns the file to upload: of the most preferred type the meeting has, the first one.
// ok is false when there is none, or when it is still processing (the meeting is taken when it
// completes, rather than settling for another type and uploading the meeting twice).
func pick(m meeting, types []string) (file, bool) {
	for _, t := range types {
		for _, f := range m.RecordingFiles {
			if f.FileType == t {
				return f, f.Status == "" || f.Status == "completed"
			}
		}
	}
	return file{}, false
}

// recording describes the chosen file of m; account is the Zoom account id.
func recording(account string, m meeting, f file, hostEmail string) connectors.Recording {
	if m.HostEmail != "" {
		hostEmail = m.HostEmail
	}
	ext := strings.ToLower(f.FileExtension)
	if ext == "" {
		ext = strings.ToLower(f.FileType)
	}
	start, _ := time.Parse(time.RFC3339, m.StartTime)
	name := fmt.Sprintf("%s %s.%s", cleanName(m.Topic), start.UTC().Format("2006-01-02 1504"), ext)
	r := connectors.Recording{
		ItemID: m.UUID + "/" + f.ID, Version: strconv.FormatInt(f.FileSize, 10), Name: name, Size: f.FileSize, ModTime: start,
		Link:             f.PlayURL,
		SourceExternalID: fmt.Sprintf("zoom:%s:%s:%s", account, m.UUID, f.ID),
		Owner:            &connectors.Owner{Provider: "zoom", ID: m.HostID, Email: hostEmail},
		Fields: map[string]string{"topic": m.Topic, "meeting_id": strconv.FormatInt(m.ID, 10), "meeting_uuid": m.UUID,
			"start_time": m.StartTime, "duration": strconv.Itoa(m.Duration), "host_id": m.HostID, "host_email": hostEmail,
			"file_id": f.ID, "file_type": f.FileType, "recording_type": f.RecordingType, "download_url": f.DownloadURL},
		Metadata: map[string]string{"zoom_topic": m.Topic, "zoom_meeting_id": strconv.FormatInt(m.ID, 10),
			"zoom_start_time": m.StartTime, "zoom_duration_minutes": strconv.Itoa(m.Duration), "zoom_host": hostEmail},
	}
	if r.Owner.Email == "" {
		r.Metadata["zoom_host"] = m.HostID
	}
	return r
}

// cleanName keeps a topic usable as a file name.
func cleanName(topic string) string {
	topic = strings.Map(func(r rune) rune {
		if r < ' ' || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '-'
		}
		return r
	}, strings.TrimSpace(topic))
	if topic == "" {
		topic = "Zoom meeting"
	}
	if len(topic) > 120 {
		topic = topic[:120]
	}
	return topic
}
