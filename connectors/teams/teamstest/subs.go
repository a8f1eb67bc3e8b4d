package teamstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Subscription is a change-notification subscription: Graph's fields, as its JSON names them,
// and the clientState it was made with.
type Subscription struct {
	ID                       string    `json:"id"`
	Resource                 string    `json:"resource"`
	ChangeType               string    `json:"changeType"`
	NotificationURL          string    `json:"notificationUrl"`
	LifecycleNotificationURL string    `json:"lifecycleNotificationUrl,omitempty"`
	ExpirationDateTime       time.Time `json:"expirationDateTime"`
	ApplicationID            string    `json:"applicationId"`
	ClientState              string    `json:"-"`
	// Renewals and Reauthorized count PATCH and reauthorize requests.
	Renewals, Reauthorized int `json:"-"`
}

// Subscriptions returns copies of the live subscriptions.
func (s *Server) Subscriptions() []Subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Subscription
	for _, sub := range s.subs {
		if sub.ExpirationDateTime.After(s.Now()) {
			out = append(out, *sub)
		}
	}
	return out
}

// Drop removes a subscription as Graph does when it expires or is removed, telling no one.
func (s *Server) Drop(id string) { s.Edit(func() { delete(s.subs, id) }) }

// subscriptions answers /subscriptions: create (with the validation handshake), list, get,
// renew (PATCH), delete, reauthorize.
func (s *Server) subscriptions(w http.ResponseWriter, r *http.Request, p []string) {
	s.count("subscriptions")
	if s.refused(PermRecordings) {
		graphError(w, http.StatusForbidden, "ExtensionError", "Operation: Create; Exception: [Status Code: Forbidden; Reason: Missing role permissions on the request. API requires one of 'OnlineMeetingRecording.Read.All'.]")
		return
	}
	switch {
	case len(p) == 0 && r.Method == http.MethodPost:
		s.createSubscription(w, r)
	case len(p) == 0 && r.Method == http.MethodGet:
		live := s.Subscriptions()
		writeJSON(w, http.StatusOK, map[string]any{"@odata.context": hostBase(r) + "/v1.0/$metadata#subscriptions", "value": append([]Subscription{}, live...)})
	case len(p) == 2 && p[1] == "reauthorize" && r.Method == http.MethodPost:
		s.withSubscription(w, p[0], func(sub *Subscription) { sub.Reauthorized++; w.WriteHeader(http.StatusNoContent) })
	case len(p) == 1 && r.Method == http.MethodDelete:
		s.withSubscription(w, p[0], func(sub *Subscription) { delete(s.subs, sub.ID); w.WriteHeader(http.StatusNoContent) })
	case len(p) == 1 && r.Method == http.MethodGet:
		s.withSubscription(w, p[0], func(sub *Subscription) { writeJSON(w, http.StatusOK, sub) })
	case len(p) == 1 && r.Method == http.MethodPatch:
		var body struct {
			ExpirationDateTime time.Time `json:"expirationDateTime"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		s.withSubscription(w, p[0], func(sub *Subscription) {
			if msg := s.badExpiry(body.ExpirationDateTime, sub.LifecycleNotificationURL); msg != "" {
				graphError(w, http.StatusBadRequest, "ValidationError", msg)
				return
			}
			sub.ExpirationDateTime, sub.Renewals = body.ExpirationDateTime, sub.Renewals+1
			writeJSON(w, http.StatusOK, sub)
		})
	default:
		graphError(w, http.StatusMethodNotAllowed, "BadRequest", "not supported")
	}
}

// withSubscription runs fn on a live subscription under the lock, or answers 404.
func (s *Server) withSubscription(w http.ResponseWriter, id string, fn func(*Subscription)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.subs[id]
	if !ok || !sub.ExpirationDateTime.After(s.Now()) {
		graphError(w, http.StatusNotFound, "ResourceNotFound", "The object was not found.")
		return
	}
	fn(sub)
}

// badExpiry says why Graph refuses an expirationDateTime, or "".
func (s *Server) badExpiry(exp time.Time, lifecycleURL string) string {
	now := s.Now()
	switch {
	case !exp.After(now):
		return "Subscription expiration must be in the future."
	case exp.After(now.Add(s.MaxLifetime)):
		return fmt.Sprintf("Subscription expiration can only be %d minutes in the future.", int(s.MaxLifetime.Minutes()))
	case exp.After(now.Add(time.Hour)) && lifecycleURL == "":
		return "lifecycleNotificationUrl is required for subscription creation on this resource when the expirationDateTime value exceeds 1 hour."
	}
	return ""
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request) {
	var sub Subscription
	var body struct {
		Subscription
		ClientState string `json:"clientState"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		graphError(w, http.StatusBadRequest, "InvalidRequest", "Could not read the request body.")
		return
	}
	sub, sub.ClientState = body.Subscription, body.ClientState
	res := strings.Trim(sub.Resource, "/")
	s.mu.Lock()
	msg := s.badExpiry(sub.ExpirationDateTime, sub.LifecycleNotificationURL)
	s.mu.Unlock()
	switch {
	case sub.ChangeType != "created":
		msg = "The changeType '" + sub.ChangeType + "' is not supported for this resource; use created."
	case res != "communications/onlineMeetings/getAllRecordings" && !(strings.HasPrefix(res, "users/") && strings.HasSuffix(res, "/onlineMeetings/getAllRecordings")):
		msg = "Resource '" + sub.Resource + "' is not supported."
	case !reachable(sub.NotificationURL):
		msg = "The notificationUrl must use https."
	case len(sub.ClientState) > 128:
		msg = "clientState is longer than 128 characters."
	}
	if msg == "" {
		msg = s.validate(sub.NotificationURL)
	}
	if msg == "" && sub.LifecycleNotificationURL != "" {
		msg = s.validate(sub.LifecycleNotificationURL)
	}
	if msg != "" {
		graphError(w, http.StatusBadRequest, "ValidationError", msg)
		return
	}
	s.mu.Lock()
	s.seq++
	sub.ID = fmt.Sprintf("7f105c7d-2dc5-4530-97cd-%012d", s.seq)
	sub.ApplicationID = ClientID
	s.subs[sub.ID] = &sub
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, sub)
}

// reachable is an https URL, or http on loopback (the fake's tests).
func reachable(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "https" || u.Scheme == "http" && (u.Hostname() == "localhost" || ip != nil && ip.IsLoopback())
}

// validate runs the handshake: a POST with ?validationToken=…, to be answered within 10 s with
// 200 and the token as plain text. It returns why it failed, or "".
func (s *Server) validate(target string) string {
	token := fmt.Sprintf("Validation: Testing client application reachability for subscription Request-Id: 0b%d-ea39-4c6f-9d58-3f1e2d4c5b6a", time.Now().UnixNano())
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	req, _ := http.NewRequest(http.MethodPost, target+sep+"validationToken="+url.QueryEscape(token), nil)
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request."
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
	if resp.StatusCode != http.StatusOK || string(got) != token || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		return fmt.Sprintf("Subscription validation request failed. Response must exactly match validationToken query parameter (got %d %q).", resp.StatusCode, got)
	}
	return ""
}

// ChangeNotification is the notification (without resource data) Graph posts for a recording
// made available, under subscription sub with clientState.
func ChangeNotification(sub, clientState string, expires time.Time, r *Recording) []byte {
	path := "communications/onlineMeetings('" + r.MeetingID + "')/recordings('" + r.ID + "')"
	b, _ := json.Marshal(map[string]any{"value": []any{map[string]any{"subscriptionId": sub, "changeType": "created",
		"tenantId": TenantID, "clientState": clientState, "subscriptionExpirationDateTime": expires.Format(time.RFC3339Nano),
		"resource": path, "resourceData": map[string]any{"id": r.ID, "@odata.type": "#Microsoft.Graph.callRecording", "@odata.id": path}}}})
	return b
}

// Notify posts the change notification of r to every live subscription whose resource covers
// its organizer, and returns the answers' statuses (0 when the post failed).
func (s *Server) Notify(r *Recording) []int {
	var out []int
	for _, sub := range s.Subscriptions() {
		res := strings.Trim(sub.Resource, "/")
		if res != "communications/onlineMeetings/getAllRecordings" && res != "users/"+r.Organizer+"/onlineMeetings/getAllRecordings" {
			continue
		}
		out = append(out, post(sub.NotificationURL, ChangeNotification(sub.ID, sub.ClientState, sub.ExpirationDateTime, r)))
	}
	return out
}

// Lifecycle posts a lifecycle notification (reauthorizationRequired, subscriptionRemoved,
// missed) of subscription id to its lifecycleNotificationUrl and returns the answer's status
// (0 when there is no such subscription or the post failed); for subscriptionRemoved the
// subscription is removed first.
func (s *Server) Lifecycle(id, event string) int {
	s.mu.Lock()
	sub, ok := s.subs[id]
	var c Subscription
	if ok {
		c = *sub
	}
	if event == "subscriptionRemoved" {
		delete(s.subs, id)
	}
	s.mu.Unlock()
	if !ok {
		return 0
	}
	b, _ := json.Marshal(map[string]any{"value": []any{map[string]any{"subscriptionId": id, "tenantId": TenantID,
		"clientState": c.ClientState, "subscriptionExpirationDateTime": c.ExpirationDateTime.Format(time.RFC3339Nano), "lifecycleEvent": event}}})
	return post(c.LifecycleNotificationURL, b)
}

func post(target string, body []byte) int {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(target, "application/json; charset=utf-8", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
