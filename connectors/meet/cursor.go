package meet

import (
	"encoding/json"
	"fmt"
	"time"
)

// cursor is what a source stores between sweeps, per user.
type cursor struct {
	Users map[string]userState `json:"users"`
}

// userState is where a user's next sweep starts.
type userState struct {
	// Since is when the last sweep ran (the first time: the start date): the next lists the
	// conferences that ended since, less the overlap.
	Since time.Time `json:"since"`
	// Done are the conferences of the overlap whose recordings were all taken (or that had
	// none), by name, with their end: the next sweep does not read them again.
	Done map[string]time.Time `json:"done,omitempty"`
	// Waiting are the conferences with a recording whose file Meet has not generated yet
	// (STARTED, ENDED): each sweep reads their recordings again until it has, or until Meet
	// deletes the conference record.
	Waiting []waiting `json:"waiting,omitempty"`
}

// waiting is a conference whose recordings are read again.
type waiting struct {
	Name  string    `json:"name"`
	Space string    `json:"space,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

func decodeCursor(s string) (cursor, error) {
	c := cursor{Users: map[string]userState{}}
	if s == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("meet cursor: %w", err)
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
