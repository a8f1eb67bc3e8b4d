package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable prints results as the table bridge bench shows: figure, bridge, reference, ratio,
// goal, pass/fail. It fails only when w does.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tBRIDGE\tREFERENCE\tRATIO\tGOAL\tRESULT")
	for _, r := range results {
		ref, ratio := "-", "-"
		if r.Reference != nil {
			ref = num(*r.Reference) + " " + r.Unit
			if r.ReferenceName != "" {
				ref += " (" + r.ReferenceName + ")"
			}
		}
		if r.Ratio != nil {
			ratio = strconv.FormatFloat(*r.Ratio, 'f', 2, 64) + "×"
		}
		result := "pass"
		if !r.Pass {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\t%s\n", r.Name, num(r.Value), r.Unit, ref, ratio, r.Goal, result)
	}
	return tw.Flush()
}

// num prints a figure with the precision it deserves: whole numbers from 100 up.
func num(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1 || v <= -1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// WriteJSON prints results as one JSON document: {"results": [...]}. It fails only when w does.
func WriteJSON(w io.Writer, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Results []Result `json:"results"`
	}{results})
}
