package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// transcript is the synthetic result of processing one file. Everything in it derives from the
// file's SHA-256 and the upload options, so the same file always gives the same transcript.
type transcript struct {
	language string
	speakers []speakerJSON
	segments []segmentJSON
	text     string
	title    string // only with ai_metadata
	summary  string
	topics   []topicJSON
}

var (
	speakerNames = []string{"Olivia", "Sam", "Priya", "Marcus", "Elena", "Kenji", "Amara", "Lucas", "Fatima", "Noah",
		"Ingrid", "Diego", "Hannah", "Tomasz", "Aisha", "Wei", "Chloe", "Rafael", "Yuki", "Omar"}
	topicBank = []string{"Quarterly numbers", "Customer churn", "Sales pipeline", "Product roadmap", "Hiring plan",
		"Contract review", "Marketing campaign", "Budget", "Onboarding", "Support backlog", "Pricing", "Release schedule"}
	openers = []string{"Good morning everyone.", "Thanks for joining.", "Let's get started.", "Quick update from my side.",
		"I have a question about that.", "That makes sense.", "Let me share the numbers.", "To follow up on last week,"}
	bodies = []string{"sales grew twelve percent this quarter", "churn fell compared to last month",
		"the proposal goes out by Friday", "legal needs the contract draft", "we should review the pricing tiers",
		"the customer asked for a follow-up call tomorrow", "the pipeline looks healthy for the next quarter",
		"onboarding time went down by two days", "the release moves to next Tuesday", "support tickets are under control",
		"marketing wants a budget for the campaign", "we need two more engineers on the team"}
	closers = []string{"", " Any objections?", " I will send a summary.", " Let's decide next week.", " Sounds good.",
		" I'll take that action item.", " Does that work for everyone?"}
)

// rngFor seeds a PRNG from a hex digest and a purpose, so different uses stay independent.
func rngFor(digest, purpose string) *rand.Rand {
	b, _ := hex.DecodeString(digest)
	for len(b) < 16 {
		b = append(b, 0x5a)
	}
	s1 := binary.LittleEndian.Uint64(b[0:8])
	s2 := binary.LittleEndian.Uint64(b[8:16])
	for _, c := range []byte(purpose) {
		s2 = s2*1099511628211 ^ uint64(c)
	}
	return rand.New(rand.NewPCG(s1, s2))
}

// synthesize builds the transcript of a recording of duration seconds.
func synthesize(digest string, duration float64, diarize bool, speakersCount int, aiMeta bool, language string) *transcript {
	rng := rngFor(digest, "transcript")
	tr := &transcript{language: language, speakers: []speakerJSON{}, segments: []segmentJSON{}}
	if tr.language == "" || tr.language == "auto" {
		tr.language = "en"
	}
	n := speakersCount
	if n == 0 {
		n = 2 + rng.IntN(2)
		if duration < 8 {
			n = 1
		}
	}
	if !diarize {
		n = 1
	}
	names := rng.Perm(len(speakerNames))
	labels := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("S%d", i+1)
		label := fmt.Sprintf("Speaker %d", i+1)
		sp := speakerJSON{ID: id, Name: &label}
		if aiMeta {
			name := speakerNames[names[i%len(names)]]
			if i >= len(speakerNames) {
				name = fmt.Sprintf("%s %d", name, i/len(speakerNames)+1)
			}
			sp.Name = &name
		}
		labels[i] = *sp.Name
		if diarize {
			tr.speakers = append(tr.speakers, sp)
		}
	}
	var lines []string
	pii := newPersonal(digest, "transcript")
	speaker := 0
	for start, id := 0.0, 1; start < duration; id++ {
		length := 2.5 + rng.Float64()*6.5
		end := math.Min(duration, start+length)
		if duration-end < 1.5 {
			end = duration
		}
		body := bodies[rng.IntN(len(bodies))]
		utterance := openers[rng.IntN(len(openers))] + " " + strings.ToUpper(body[:1]) +
			body[1:] + "." + closers[rng.IntN(len(closers))]
		if id%2 == 1 {
			utterance += pii.sentence()
		}
		s0, e0 := round2(start), round2(end)
		seg := segmentJSON{ID: id, Start: &s0, End: &e0, Text: utterance}
		if diarize {
			sid := tr.speakers[speaker].ID
			seg.SpeakerID = &sid
			if aiMeta {
				seg.SpeakerName = tr.speakers[speaker].Name
			}
		}
		tr.segments = append(tr.segments, seg)
		lines = append(lines, fmt.Sprintf("[%s] %s: %s", clock(start), labels[speaker], utterance))
		if n > 1 && rng.IntN(3) > 0 {
			speaker = (speaker + 1 + rng.IntN(n-1)) % n
		}
		start = end
	}
	tr.text = strings.Join(lines, "\n")
	if aiMeta {
		tr.addMetadata(rng, labels, duration)
	}
	return tr
}

// addMetadata writes what ai_metadata adds: topics, a title made of the first two and a
// summary naming the speakers (labels). It draws from rng after the segments.
func (tr *transcript) addMetadata(rng *rand.Rand, labels []string, duration float64) {
	n := len(labels)
	perm := rng.Perm(len(topicBank))
	k := 2 + rng.IntN(3)
	var titles []string
	for _, i := range perm[:k] {
		tr.topics = append(tr.topics, topicJSON{Title: topicBank[i]})
		titles = append(titles, strings.ToLower(topicBank[i]))
	}
	tr.title = fmt.Sprintf("%s and %s", topicBank[perm[0]], strings.ToLower(topicBank[perm[1]]))
	who := labels[0]
	if n > 1 {
		who = strings.Join(labels[:n-1], ", ") + " and " + labels[n-1]
	}
	tr.summary = fmt.Sprintf("%s discussed %s over %s. They agreed on next steps and assigned action items.",
		who, joinAnd(titles), spokenDuration(duration))
}

// reportText writes a report as prose naming its template.
func reportText(name, slug, digest, title, summary string, segments int) string {
	rng := rngFor(digest, "report:"+slug)
	points := rng.Perm(len(bodies))[:3]
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %q.\n\n", name, title)
	if summary != "" {
		b.WriteString(summary + "\n\n")
	}
	fmt.Fprintf(&b, "The recording holds %d utterances. The main points were that %s, that %s, and that %s.",
		segments, bodies[points[0]], bodies[points[1]], bodies[points[2]])
	fmt.Fprintf(&b, " Questions go to %s.", newPersonal(digest, "report:"+slug).email())
	return b.String()
}

func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func spokenDuration(sec float64) string {
	m := int(sec) / 60
	if m == 0 {
		return fmt.Sprintf("%d seconds", int(sec))
	}
	return fmt.Sprintf("%d minutes", m)
}

// clock formats seconds as mm:ss (minutes keep counting past an hour).
func clock(sec float64) string {
	s := int(sec)
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
