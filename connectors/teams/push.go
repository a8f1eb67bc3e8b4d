package teams

import (
	"context"
	"crypto/subtle"
	"encoding/json"
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
	// queue holds the notifications accepted (202) and not yet read, for Subscribe's worker.
	queue chan notification

	mu       sync.Mutex
	intake   connectors.Intake // set by Handler
	sub      *subscription     // the live subscription, when known
	got      time.Time         // when sub was made, renewed or found
	lifetime time.Duration     // asked of Graph; an hour once Graph refused more
	force    bool              // renew at once (reauthorizationRequired)
}

// lifecycle is a lifecycle notification: reauthorizationRequired, subscriptionRemoved, missed.
type lifecycle struct{ event, subscription string }

func newPush(c Config) *push {
	return &push{url: strings.TrimSuffix(c.Notifications["public_url"], "/") + "/hooks/teams/" + c.Name, state: c.ClientState,
		events: make(chan lifecycle, 16), queue: make(chan notification, c.NotifyQueue), lifetime: c.SubscriptionLifetime}
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
// time), else 401. The handler calls no Graph API: Graph wants an answer within 3 seconds and
// slows down, then drops, the notifications of an endpoint that answers late
// (https://learn.microsoft.com/graph/change-notifications-delivery-webhooks: "If the service
// takes longer than 10 seconds to process the notification, it should persist the
// notification in a queue on its endpoint and return 202 - Accepted"). A recording notified is
// checked against the organizers resolved beforehand (Subscribe keeps them fresh), queued and
// answered 202; Subscribe's worker reads it from Graph (so a forged notification cannot name
// one that does not exist) and stores it through intake. A full queue answers 503, for Graph
// to send it again. What is queued and then lost (the process killed, Graph failing) is found
// by the sweep. Lifecycle notifications are answered 202 and handed to Subscribe.
func (p *PushSource) Handler(intake connectors.Intake) http.Handler {
	p.push.mu.Lock()
	p.push.intake = intake
	p.push.mu.Unlock()
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
		if !p.accept(batch.Value) {
			p.warn("change notifications come faster than they are read; Graph sends them again", p.push.url, nil)
			http.Error(w, "too many notifications waiting; send again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

// accept hands lifecycle notifications to Subscribe and queues the recordings notified whose
// organizer is synced, without calling Graph; false when the queue is full.
func (p *PushSource) accept(ns []notification) bool {
	for _, n := range ns {
		if n.LifecycleEvent != "" {
			select {
			case p.push.events <- lifecycle{event: n.LifecycleEvent, subscription: n.SubscriptionID}:
			default: // Subscribe is busy with earlier ones, which call for the same
			}
			continue
		}
		if n.ChangeType != "" && n.ChangeType != "created" || !p.wanted(n) {
			continue
		}
		select {
		case p.push.queue <- n:
		default:
			return false
		}
	}
	return true
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

// notified is what a notification names: the meeting, the recording and the organizer.
func notified(n notification) (meeting, id, orgID string) {
	meeting, id = resourceID(meetingRe, n.Resource), resourceID(recordingRe, n.Resource)
	if id == "" {
		id = n.ResourceData.ID
	}
	if orgID = resourceID(userRe, n.Resource); orgID == "" {
		orgID, _ = meetingOrganizer(meeting)
	}
	return meeting, id, orgID
}

// wanted reports whether a notification names a recording to take, from what is known without
// Graph: its ids, and its organizer among those synced (when they are resolved already; else
// the worker decides).
func (p *PushSource) wanted(n notification) bool {
	meeting, id, orgID := notified(n)
	if orgID == "" {
		p.warn("a notified recording's organizer cannot be told; the sweep takes it", n.Resource, nil)
		return false
	}
	if meeting == "" || id == "" || p.cfg.all() {
		return meeting != "" && id != ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scope == nil || p.scope[orgID]
}

// work reads the notifications queued by the handler until ctx ends: each recording is read
// from Graph and stored through intake. One that cannot be read or stored is left to the sweep
// with a warning.
func (p *PushSource) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-p.push.queue:
			if err := p.take(ctx, n); err != nil && ctx.Err() == nil {
				p.warn("a notified recording is not stored; the sweep takes it", n.Resource, err)
			}
		}
	}
}

// take reads the recording a notification names and stores it through intake; a recording of
// an organizer not synced is left alone.
func (p *PushSource) take(ctx context.Context, n notification) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	meeting, id, orgID := notified(n)
	if in, err := p.inScope(ctx, orgID); err != nil || !in {
		return err
	}
	org, err := p.user(ctx, orgID)
	if err != nil {
		return err
	}
	cr, err := p.getRecording(ctx, where{org: org, meeting: meeting}, id)
	if err != nil {
		return err
	}
	rec, ok := recording(cr, org, false)
	p.push.mu.Lock()
	intake := p.push.intake
	p.push.mu.Unlock()
	if !ok || intake == nil {
		return nil
	}
	return intake(ctx, []connectors.Recording{rec})
}
