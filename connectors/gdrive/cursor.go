package gdrive

import (
	"encoding/json"
	"fmt"
	"time"
)

// cursor is what a source stores between scans, per subject: the changes token, when the last
// full listing ran, the folders known to be in scope and the drive they are in.
type cursor struct {
	Users map[string]userState `json:"users"`
}

type userState struct {
	Token   string    `json:"token"`
	FullAt  time.Time `json:"full_at"`
	Folders []string  `json:"folders,omitempty"`
	// Drive is the shared drive listed and whose changes Token follows; "" for My Drive.
	Drive string `json:"drive,omitempty"`
	// Located is set once Drive was read from the folder (a full listing); a cursor written
	// before that takes a full listing first, its token being of the user's own feed.
	Located bool `json:"located,omitempty"`
	// Root is the id of the user's My Drive (meet_recordings), where Meet creates its
	// "Google Meet" folder.
	Root string `json:"root,omitempty"`
	// Legacy are the ids of the user's legacy "Meet Recordings" folders (meet_recordings),
	// followed by id once seen whatever Google renames them to.
	Legacy []string `json:"legacy,omitempty"`
}

func decodeCursor(s string) (cursor, error) {
	c := cursor{Users: map[string]userState{}}
	if s == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("gdrive cursor: %w", err)
	}
	if c.Users == nil {
		c.Users = map[string]userState{}
	}
	return c, nil
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return string(b)
}
