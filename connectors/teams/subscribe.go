package teams

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// resource is what the subscription watches: every recording of the tenant's online meetings
// (recordings of organizers not synced are ignored as they arrive).
const resource = "communications/onlineMeetings/getAllRecordings"

// subscription is Graph's subscription resource, as far as the source reads it.
type subscription struct {
	ID                 string    `json:"id"`
	Resource           string    `json:"resource"`
	NotificationURL    string    `json:"notificationUrl"`
	ExpirationDateTime time.Time `json:"expirationDateTime"`
}

// Subscribe keeps the change-notification subscription alive until ctx ends; bridge run calls
// it once its server listens, since Graph validates the notification URL when the
// subscription is made. It takes over a subscription of this app to the same resource and URL
// (left by an earlier run or another replica), else creates one; renews it when a third of
// its life is left, at once on reauthorizationRequired, and makes a new one on
// subscriptionRemoved or when Graph no longer knows it. Failures are logged and tried again
// (30 s, doubling up to 15 minutes): the sweep finds every recording meanwhile. Meanwhile it
// reads the recordings the handler queued, and resolves the configured organizers at once and
// every OrganizersRefresh, for the handler to check notifications against.
func (p *PushSource) Subscribe(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { p.work(ctx) })
	if !p.cfg.all() {
		wg.Go(func() { p.keepOrganizers(ctx) })
	}
	ps := p.push
	failures := 0
	for {
		wait, err := p.ensure(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			p.warn("change notifications: cannot subscribe; the sweep still finds every recording", ps.url, err)
			wait = min(p.cfg.SubscribeRetry<<min(failures, 10), 15*time.Minute)
			failures++
		} else {
			failures = 0
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev := <-ps.events:
			timer.Stop()
			p.onLifecycle(ev)
		case <-timer.C:
		}
	}
}

// onLifecycle acts on a lifecycle notification at the next ensure.
func (p *PushSource) onLifecycle(ev lifecycle) {
	ps := p.push
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch ev.event {
	case "reauthorizationRequired":
		ps.force = true // a renewal reauthorizes
	case "subscriptionRemoved":
		if ps.sub != nil && (ev.subscription == "" || ev.subscription == ps.sub.ID) {
			ps.sub = nil
		}
	default: // missed: the next sweep lists what was added meanwhile
		p.info("change notifications: Graph reports "+ev.event+"; the sweep catches up", "subscription", ev.subscription)
	}
}

// ensure makes sure a subscription lives, and returns how long until it needs renewing.
func (p *PushSource) ensure(ctx context.Context) (time.Duration, error) {
	ps := p.push
	ps.mu.Lock()
	sub, got, force, lifetime := ps.sub, ps.got, ps.force, ps.lifetime
	ps.mu.Unlock()
	now := p.cfg.Now()
	var err error
	if sub == nil {
		if sub, err = p.find(ctx); err != nil {
			return 0, err
		}
		got = now
	}
	switch {
	case sub == nil:
		sub, err = p.subscribe(ctx, "", now)
		got = now
	case force || !now.Before(renewAt(sub.ExpirationDateTime, got, lifetime)):
		sub, err = p.subscribe(ctx, sub.ID, now)
		if isStatus(err, http.StatusNotFound) { // expired or removed meanwhile
			sub, err = p.subscribe(ctx, "", now)
		}
		got = now
	}
	if err != nil {
		return 0, err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.sub, ps.got, ps.force = sub, got, false
	return max(time.Second, renewAt(sub.ExpirationDateTime, got, ps.lifetime).Sub(p.cfg.Now())), nil
}

// renewAt is when a subscription expiring at exp, granted (or found) at got, is renewed: when a
// third of its life is left, its life being what Graph granted, at most the lifetime asked (a
// subscription Graph grants for less than asked is not renewed over and over).
func renewAt(exp, got time.Time, lifetime time.Duration) time.Time {
	return exp.Add(-min(lifetime, exp.Sub(got)) / 3)
}

// find returns this app's subscription to the resource at the notification URL, the one that
// lives longest, or nil.
func (p *PushSource) find(ctx context.Context) (*subscription, error) {
	var found *subscription
	next := p.cfg.GraphURL + "/v1.0/subscriptions"
	for next != "" {
		var page struct {
			Value []subscription `json:"value"`
			Next  string         `json:"@odata.nextLink"`
		}
		if err := p.api.do(ctx, call{op: "list subscriptions", method: http.MethodGet, url: next, need: needRecordings}, &page); err != nil {
			return nil, err
		}
		for _, s := range page.Value {
			if strings.EqualFold(strings.Trim(s.Resource, "/"), resource) && s.NotificationURL == p.push.url &&
				(found == nil || s.ExpirationDateTime.After(found.ExpirationDateTime)) {
				found = &s
			}
		}
		next = page.Next
	}
	return found, nil
}

// subscribe creates a subscription (id empty) or renews subscription id, for the lifetime
// asked; when Graph refuses a lifetime over an hour (400), it asks for an hour and keeps to it.
func (p *PushSource) subscribe(ctx context.Context, id string, now time.Time) (*subscription, error) {
	ps := p.push
	for {
		ps.mu.Lock()
		lifetime := ps.lifetime
		ps.mu.Unlock()
		exp := now.Add(lifetime).UTC().Format(time.RFC3339)
		c := call{op: "renew subscription", method: http.MethodPatch, need: needRecordings,
			url: p.cfg.GraphURL + "/v1.0/subscriptions/" + url.PathEscape(id), body: map[string]string{"expirationDateTime": exp}}
		if id == "" {
			c = call{op: "create subscription", method: http.MethodPost, url: p.cfg.GraphURL + "/v1.0/subscriptions", need: needRecordings,
				body: map[string]string{"changeType": "created", "resource": resource, "notificationUrl": ps.url,
					"lifecycleNotificationUrl": ps.url, "clientState": ps.state, "expirationDateTime": exp}}
		}
		var sub subscription
		err := p.api.do(ctx, c, &sub)
		if isStatus(err, http.StatusBadRequest) && lifetime > time.Hour {
			p.warn("change notifications: Graph refused a subscription of "+lifetime.String()+"; asking for one hour", ps.url, err)
			ps.mu.Lock()
			ps.lifetime = time.Hour - time.Minute
			ps.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, err
		}
		if sub.ID == "" {
			sub.ID = id
		}
		p.info("change notifications: subscribed", "subscription", sub.ID, "expires", sub.ExpirationDateTime, "url", ps.url)
		return &sub, nil
	}
}
