package main

// The configuration file as YAML: where each key is written, and where a file that does not
// parse goes wrong.

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// filePositions records where each key (and its value) of the YAML document is written.
func filePositions(n *yaml.Node, at, label string, orig *origins) {
	join := func(k string) string {
		if at == "" {
			return strings.ToLower(k)
		}
		return at + "." + strings.ToLower(k)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			filePositions(c, at, label, orig)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge key: its keys are written elsewhere
				continue
			}
			p := join(k.Value)
			orig.at[p] = fmt.Sprintf("%s:%d:%d", label, k.Line, k.Column)
			orig.valueAt[p] = fmt.Sprintf("%s:%d:%d", label, v.Line, v.Column)
			filePositions(v, p, label, orig)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := join(strconv.Itoa(i))
			orig.at[p] = fmt.Sprintf("%s:%d:%d", label, c.Line, c.Column)
			filePositions(c, p, label, orig)
		}
	}
}

// yamlParses reports whether b parses the way the file is read (a mapping at the top).
func yamlParses(b []byte) error {
	var m map[string]any
	return yaml.Unmarshal(b, &m)
}

var yamlLinePrefix = regexp.MustCompile(`^yaml: (unmarshal errors:\s*)?(line \d+: )?`)

// yamlSyntaxError says where a file that does not parse goes wrong. yaml.v3 often names the
// line where the enclosing block began (or, for an unclosed quote, the end of the file), so
// the position is found again: the line is the one after the longest run of lines that
// parses, the column the first character from which no beginning of that line parses. ok is
// false when data parses.
func yamlSyntaxError(data []byte) (line, col int, msg string, ok bool) {
	if yamlParses(data) == nil {
		return 0, 0, "", false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	n := len(lines) - 1
	for n > 0 && yamlParses(bytes.Join(lines[:n], nil)) != nil {
		n--
	}
	head := bytes.Join(lines[:n], nil)
	text := strings.TrimRight(string(lines[n]), "\r\n")
	with := func(s string) []byte { return append(slices.Clone(head), s...) }
	c := len(text)
	for c > 0 && yamlParses(with(text[:c])) != nil {
		c--
	}
	for c < len(text) && text[c] == ' ' {
		c++
	}
	indent := len(text) - len(strings.TrimLeft(text, " \t"))
	if i := strings.IndexByte(text[:indent], '\t'); i >= 0 {
		c = i
	}
	err := yamlParses(with(text))
	if err == nil {
		err = yamlParses(data)
	}
	msg = yamlLinePrefix.ReplaceAllString(err.Error(), "")
	msg, _, _ = strings.Cut(msg, "\n")
	switch {
	case c < len(text) && (text[c] == '"' || text[c] == '\'') && strings.Contains(msg, "end of stream"):
		msg = fmt.Sprintf("unclosed quote (%c)", text[c])
	case strings.Contains(msg, "cannot unmarshal"):
		msg = "the file must hold keys (api:, store:, sources:, …) at the top: " + msg
	case c == indent && (strings.Contains(msg, "did not find expected") || strings.Contains(msg, "could not find expected")):
		msg += " (check the indentation)"
	case strings.Contains(msg, "mapping values are not allowed"):
		msg += " (a line indented too far, or a value holding \": \" that needs quotes)"
	}
	return n + 1, utf8.RuneCountInString(text[:c]) + 1, msg, true
}
