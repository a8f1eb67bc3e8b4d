package meettest

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// conferenceRecords.list's filter, as its reference documents it
// (https://developers.google.com/workspace/meet/api/reference/rest/v2/conferenceRecords/list):
// "User specified filtering condition in EBNF format. The following are the filterable fields:
// space.meeting_code, space.name, start_time, end_time", with the examples
// `space.name = "spaces/NAME"`, `space.meeting_code = "abc-mnop-xyz"`,
// `start_time>="2024-01-01T00:00:00.000Z" AND start_time<="2024-01-02T00:00:00.000Z"` and
// `end_time IS NULL`. Terms are joined by AND (AIP-160, https://google.aip.dev/160); a field
// the filter cannot use is INVALID_ARGUMENT. An ongoing conference has no end_time: it matches
// `end_time IS NULL` and no comparison of end_time.

// cond decides whether a conference matches, given its space.
type cond func(c *conference, sp *space) bool

var (
	compare = regexp.MustCompile(`^(space\.meeting_code|space\.name|start_time|end_time)\s*(>=|<=|!=|=|<|>)\s*"([^"]*)"$`)
	isNull  = regexp.MustCompile(`^(start_time|end_time)\s+IS\s+(NOT\s+)?NULL$`)
	and     = regexp.MustCompile(`\s+AND\s+`)
)

// parseFilter compiles filter ("" matches everything).
func parseFilter(filter string) (cond, error) {
	filter = strings.TrimSpace(filter)
	if filter == "" {
		return func(*conference, *space) bool { return true }, nil
	}
	var conds []cond
	for _, term := range and.Split(filter, -1) {
		c, err := parseTerm(strings.TrimSpace(term))
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return func(c *conference, sp *space) bool {
		for _, f := range conds {
			if !f(c, sp) {
				return false
			}
		}
		return true
	}, nil
}

func parseTerm(term string) (cond, error) {
	if m := isNull.FindStringSubmatch(term); m != nil {
		null := m[2] == ""
		return func(c *conference, _ *space) bool { return timeOf(c, m[1]).IsZero() == null }, nil
	}
	m := compare.FindStringSubmatch(term)
	if m == nil {
		return nil, fmt.Errorf("invalid filter term %q", term)
	}
	field, op, value := m[1], m[2], m[3]
	if field == "space.name" || field == "space.meeting_code" {
		if op != "=" && op != "!=" {
			return nil, fmt.Errorf("%s takes = or !=, not %s", field, op)
		}
		return func(_ *conference, sp *space) bool {
			v := sp.name
			if field == "space.meeting_code" {
				v = sp.code
			}
			return (v == value) == (op == "=")
		}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an RFC 3339 timestamp", field, value)
	}
	return func(c *conference, _ *space) bool {
		t := timeOf(c, field)
		if t.IsZero() {
			return false
		}
		switch op {
		case "=":
			return t.Equal(at)
		case "!=":
			return !t.Equal(at)
		case "<":
			return t.Before(at)
		case "<=":
			return !t.After(at)
		case ">":
			return t.After(at)
		}
		return !t.Before(at) // >=
	}, nil
}

func timeOf(c *conference, field string) time.Time {
	if field == "start_time" {
		return c.start
	}
	return c.end
}
