package relay

import "github.com/transcript-bridge/bridge/bridge"

// chains groups claimed deliveries by job, in the order their jobs first appear; a job's
// deliveries keep their order (the event order bridge.ClaimItem gives them).
func chains(claimed []bridge.Delivery) [][]bridge.Delivery {
	n := make(map[string]int, len(claimed))
	for _, d := range claimed {
		n[d.JobID]++
	}
	out := make([][]bridge.Delivery, 0, len(n))
	at := map[string]int{}
	for i, d := range claimed {
		if n[d.JobID] == 1 {
			out = append(out, claimed[i:i+1:i+1]) // alone: a slice of claimed, nothing copied
			continue
		}
		if j, ok := at[d.JobID]; ok {
			out[j] = append(out[j], d)
			continue
		}
		at[d.JobID] = len(out)
		out = append(out, append(make([]bridge.Delivery, 0, n[d.JobID]), d))
	}
	return out
}
