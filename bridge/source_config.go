package bridge

import (
	"errors"
	"fmt"
)

// SetDefaults fills in the defaults of unset fields: the retry deadline (DefaultRetryDeadline).
func (c *SourceConfig) SetDefaults() {
	if c.RetryDeadline == 0 {
		c.RetryDeadline = DefaultRetryDeadline
	}
}

// Validate returns the first setting at fault, the error starting with its key as in the
// bridge's configuration ("upload.reports: ..."; source and mapper for the connector and the
// mapper), or nil. Unset fields that have a default are valid.
func (c *SourceConfig) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("name: required")
	case c.Type == "":
		return errors.New("type: required")
	case c.Source == nil:
		return errors.New("source: required (the connector)")
	case c.Mapper == nil:
		return errors.New("mapper: required")
	case len(c.Upload.Reports) > 3:
		return fmt.Errorf("upload.reports: %d slugs; at most 3", len(c.Upload.Reports))
	case c.Upload.SpeakersCount < 0 || c.Upload.SpeakersCount > 20:
		return fmt.Errorf("upload.speakers_count: %d is not 1 to 20", c.Upload.SpeakersCount)
	case c.RetryDeadline < 0:
		return fmt.Errorf("retry_deadline: %v is negative", c.RetryDeadline)
	}
	return nil
}
