package main

import (
	"encoding/json"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// jsonlog: fail unless every line of the last command's stderr is one JSON object with time,
// level and msg, and names an error "error" (never "err").
func cmdJSONLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: jsonlog")
	}
	text := ts.ReadFile("stderr")
	if strings.TrimSpace(text) == "" {
		ts.Fatalf("stderr is empty")
	}
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			ts.Fatalf("stderr line %d %q is not JSON: %v", i+1, line, err)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := v[k]; !ok {
				ts.Fatalf("stderr line %d %q has no %q", i+1, line, k)
			}
		}
		if _, ok := v["err"]; ok {
			ts.Fatalf("stderr line %d %q names its error \"err\", want \"error\"", i+1, line)
		}
	}
}
