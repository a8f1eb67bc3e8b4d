package teams

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// PushSource is a Teams source with change notifications (notifications.public_url set): a
// connectors.Pusher whose Subscribe keeps the Graph subscription alive while the bridge's
// server runs.
type PushSource struct {
	*Source
}

// Push returns the source with change notifications, a connectors.Pusher, or nil when
// notifications.public_url is not set.
func (s *Source) Push() *PushSource {
	if s.push == nil {
		return nil
	}
	return &PushSource{Source: s}
}

// push is the change-notification state of a source.
type push struct {
	url   string // notificationUrl and lifecycleNotificationUrl
	state string // clientState
	// events are lifecycle notifications, for Subscribe.
	events chan lifecycle

	mu       sync.Mutex
	sub      *subscription // the live subscription, when known
	got      time.Time     // when sub was made, renewed or found
	lifetime time.Duration // asked of Graph; an hour once Graph refused more
	force    bool          // renew at once (reauthorizationRequired)
}

// lifecycle is a lifecycle notification: reauthorizationRequired, subscriptionRemoved, missed.
type lifecycle struct{ event, subscription string }

func newPush(c Config) *push {
	return &push{url: strings.TrimSuffix(c.Notifications["public_url"], "/") + "/hooks/teams/" + c.Name, state: c.ClientState,
		events: make(chan lifecycle, 16), lifetime: c.SubscriptionLifetime}
}

// notification is one item of a changeNotificationCollection (without resource data), or a
// lifecycle notification.
type notification struct {
	SubscriptionID string `json:"subscriptionId"`
	ClientState    string `json:"clientState"`
	ChangeType     string `json:"changeType"`
	Resource       string `json:"resource"`
	ResourceData   struct {
		ID string `json:"id"`
	} `json:"resourceData"`
	LifecycleEvent string `json:"lifecycleEvent"`
}

// Handler receives Graph's change notifications at /hooks/teams/<name> (connectors.Pusher).
// A validation request (?validationToken=…, when a subscription is made) is answered with the
// token as text/plain. Every notification must carry the clientState (compared in constant
// time), else 401. A recording notified is read from Graph (so a forged notification cannot
// name one that does not exist) and stored as a job through intake before the 202; a failure
// that may pass answers 503, so Graph sends it again. Lifecycle notifications are answered 202
// and handed to Subscribe.
func (p *PushSource) Handler(intake connectors.Intake) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if q := r.URL.Query(); q.Has("validationToken") {
			tok := q.Get("validationToken")
			if len(tok) > 4096 {
				http.Error(w, "validationToken too long", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			io.WriteString(w, tok)
			return
		}
		var batch struct {
			Value []notification `json:"value"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&batch); err != nil || len(batch.Value) == 0 {
			http.Error(w, "not a Graph change notification", http.StatusBadRequest)
			return
		}
		for _, n := range batch.Value {
			if subtle.ConstantTimeCompare([]byte(n.ClientState), []byte(p.push.state)) != 1 {
				http.Error(w, "clientState does not match", http.StatusUnauthorized)
				return
			}
		}
		recs, err := p.recordings(r.Context(), batch.Value)
		if err == nil && len(recs) > 0 {
			err = intake(r.Context(), recs)
		}
		if err != nil {
			p.warn("a change notification is not stored; Graph sends it again", p.push.url, err)
			http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

// recordings reads the recordings notified in ns, within NotifyTimeout, and hands lifecycle
// notifications to Subscribe. A recording that cannot be read for good (out of scope, gone,
// refused) is left to the sweep with a warning; a failure that may pass is returned.
func (p *PushSource) recordings(ctx context.Context, ns []notification) ([]connectors.Recording, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.NotifyTimeout)
	defer cancel()
	var out []connectors.Recording
	for _, n := range ns {
		if n.LifecycleEvent != "" {
			select {
			case p.push.events <- lifecycle{event: n.LifecycleEvent, subscription: n.SubscriptionID}:
			default: // Subscribe is busy with earlier ones, which call for the same
			}
			continue
		}
		if n.ChangeType != "" && n.ChangeType != "created" {
			continue
		}
		rec, ok, err := p.recordingOf(ctx, n)
		switch {
		case err != nil && (ctx.Err() != nil || errors.Is(transient(ctx, err), connectors.ErrTransient)):
			return nil, err
		case err != nil:
			p.warn("a notified recording cannot be read; the sweep looks again", n.Resource, err)
		case ok:
			out = append(out, rec)
		}
	}
	return out, nil
}

var (
	meetingRe   = regexp.MustCompile(`onlineMeetings(?:\('([^']+)'\)|/([^/]+))`)
	recordingRe = regexp.MustCompile(`recordings(?:\('([^']+)'\)|/([^/]+))`)
	userRe      = regexp.MustCompile(`users(?:\('([^']+)'\)|/([^/]+))`)
)

// resourceID is the id in resource that re matches (name('id') or name/id), or "".
func resourceID(re *regexp.Regexp, resource string) string {
	m := re.FindStringSubmatch(resource)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// recordingOf reads the recording a notification names. ok is false when it is none to take:
// the organizer cannot be told (the sweep finds it) or is not one synced.
func (p *PushSource) recordingOf(ctx context.Context, n notification) (connectors.Recording, bool, error) {
	meeting, id := resourceID(meetingRe, n.Resource), resourceID(recordingRe, n.Resource)
	if id == "" {
		id = n.ResourceData.ID
	}
	orgID := resourceID(userRe, n.Resource)
	if orgID == "" {
		var ok bool
		if orgID, ok = meetingOrganizer(meeting); !ok {
			p.warn("a notified recording's organizer cannot be told; the sweep takes it", n.Resource, nil)
			return connectors.Recording{}, false, nil
		}
	}
	if meeting == "" || id == "" {
		return connectors.Recording{}, false, nil
	}
	if in, err := p.inScope(ctx, orgID); err != nil || !in {
		return connectors.Recording{}, false, err
	}
	org, err := p.user(ctx, orgID)
	if err != nil {
		return connectors.Recording{}, false, err
	}
	cr, err := p.getRecording(ctx, org, meeting, id)
	if err != nil {
		return connectors.Recording{}, false, err
	}
	rec, ok := recording(cr, org)
	return rec, ok, nil
}
