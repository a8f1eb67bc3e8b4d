package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// RetentionConfig is how long the bridge keeps what it stores; a purge on one replica at a time
// removes the rest on schedule, in small batches. Ages are days (30d), years (1y) or Go
// durations (36h); "forever" keeps for good.
type RetentionConfig struct {
	// Deliveries is how long a delivered webhook's payload and its attempts' response bodies are
	// kept after the last attempt (default 30d).
	Deliveries string `koanf:"deliveries"`
	// DeadLetters is how long a dead delivery (given up) is kept with its attempts, for replay
	// (default 90d).
	DeadLetters string `koanf:"dead_letters"`
	// Jobs is how long a finished job (done, skipped, failed, deleted) is kept with its history,
	// events and deliveries after its last change (default 1y). Tombstones are kept for good.
	Jobs string `koanf:"jobs"`
	// Exports is the retention of local export archives.
	Exports struct {
		// Keep is how long a run's folder is kept (an age, default 30d) or how many runs of each
		// export (a count, 10). S3 destinations are left to the bucket's lifecycle rules.
		Keep string `koanf:"keep"`
	} `koanf:"exports"`
	// Schedule is a cron spec of the purge (default "@every 1h").
	Schedule string `koanf:"schedule"`
	// Batch is how many rows one purge transaction removes at most (default 500).
	Batch int `koanf:"batch"`
}

func (c *RetentionConfig) setDefaults() {
	for _, d := range []struct {
		v   *string
		def time.Duration
	}{{&c.Deliveries, bridge.DefaultRetainDeliveries}, {&c.DeadLetters, bridge.DefaultRetainDeadLetters},
		{&c.Jobs, bridge.DefaultRetainJobs}, {&c.Exports.Keep, bridge.DefaultRetainExports}} {
		if *d.v == "" {
			*d.v = bridge.FormatAge(d.def)
		}
	}
	if c.Schedule == "" {
		c.Schedule = "@every 1h"
	}
	if c.Batch == 0 {
		c.Batch = bridge.DefaultPurgeBatch
	}
}

// Validate returns the first setting at fault, its error starting with the key.
func (c *RetentionConfig) Validate() error {
	for key, v := range map[string]string{"deliveries": c.Deliveries, "dead_letters": c.DeadLetters, "jobs": c.Jobs} {
		if _, err := parseAge(v); err != nil {
			return fmt.Errorf("retention.%s: %w", key, err)
		}
	}
	if _, err := c.exportKeep(); err != nil {
		return fmt.Errorf("retention.exports.keep: %w", err)
	}
	if err := bridge.ParseSchedule(c.Schedule); err != nil {
		return fmt.Errorf("retention.schedule: %q: %w", c.Schedule, err)
	}
	if c.Batch < 0 {
		return fmt.Errorf("retention.batch: %d is negative", c.Batch)
	}
	return nil
}

// ages returns the store kinds' ages (0: forever).
func (c *RetentionConfig) ages() map[string]time.Duration {
	out := map[string]time.Duration{}
	for kind, v := range map[string]string{bridge.RetainDeliveries: c.Deliveries, bridge.RetainDeadLetters: c.DeadLetters, bridge.RetainJobs: c.Jobs} {
		out[kind], _ = parseAge(v)
	}
	return out
}

// exportKeep reads exports.keep: a count (digits only) or an age.
func (c *RetentionConfig) exportKeep() (export.Keep, error) {
	v := strings.TrimSpace(c.Exports.Keep)
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return export.Keep{}, fmt.Errorf("%d is negative", n)
		}
		return export.Keep{Count: n}, nil
	}
	age, err := parseAge(v)
	return export.Keep{Age: age}, err
}

// describeKeep says exports.keep as bridge retention show prints it.
func describeKeep(k export.Keep) string {
	switch {
	case k.Count > 0:
		return fmt.Sprintf("%d runs", k.Count)
	case k.Age > 0:
		return bridge.FormatAge(k.Age)
	}
	return "forever"
}

// parseAge reads a retention age: 30d, 1y, a Go duration (36h), or forever (0).
func parseAge(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "forever" || v == "0" {
		return 0, nil
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "y": 365 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(v, suffix); ok {
			k, err := strconv.Atoi(n)
			if err != nil || k <= 0 {
				return 0, fmt.Errorf("%q is not an age: write 30d, 1y, 36h or forever", v)
			}
			return time.Duration(k) * unit, nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age: write 30d, 1y, 36h or forever", v)
	}
	return d, nil
}
