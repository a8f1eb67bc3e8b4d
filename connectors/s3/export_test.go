package s3

import "time"

// SetSaveEvery sets how often, at most, ListPages hands over a cursor of what it listed so far.
func SetSaveEvery(s *Source, d time.Duration) { s.saveEvery = d }
