package status

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// memberOption is one member in the reassign picker.
type memberOption struct {
	ID, Label string
}

// picker is the reassign picker: the workspace's members (cached), or why there are none.
type picker struct {
	Members []memberOption
	Err     string
	At      time.Time
}

// picker returns the members to pick from, as the API last listed them (at most once per
// CacheFor).
func (p *Page) picker(r *http.Request) picker {
	if p.o.API == nil {
		return picker{Err: "no API configured"}
	}
	ms, at, err := p.members.get(r.Context(), p.now())
	if err != nil {
		return picker{Err: api.Redact(err.Error()), At: at}
	}
	out := picker{At: at}
	for _, m := range ms {
		label := m.Email
		if m.Name != nil && *m.Name != "" {
			label = *m.Name + " <" + m.Email + ">"
		}
		out.Members = append(out.Members, memberOption{ID: m.ID, Label: label})
	}
	return out
}

// heldView is the held queue: the held jobs and the picker their forms share.
type heldView struct {
	Jobs   []bridge.Job
	Total  int
	Picker picker
}

// held is GET /held: every held job, oldest first, with why it waits, a release form (an
// author typed as bridge jobs release takes it) and a reassign form (a member picked).
func (p *Page) held(w http.ResponseWriter, r *http.Request, s *session) error {
	jobs, err := p.o.Store.Jobs(r.Context(), bridge.JobFilter{States: []bridge.State{bridge.StateHeld}})
	if err != nil {
		return err
	}
	v := heldView{Total: len(jobs), Picker: p.picker(r)}
	v.Jobs = jobs[:min(len(jobs), maxListed)]
	return p.render(w, r, s, http.StatusOK, "held.html", "Held", v)
}

// release is POST /held/{id}/release: bridge.Release with the author typed (email:… or
// user:…), as bridge jobs release --author does, or without one (Try again now), as bridge
// jobs release does.
func (p *Page) release(w http.ResponseWriter, r *http.Request, s *session) error {
	id, author := r.PathValue("id"), strings.TrimSpace(r.PostFormValue("author"))
	detail := "author " + author
	if author == "" {
		detail = "tried again now"
	}
	return p.act(w, r, s, "release", []string{id}, detail, "/held", func(ctx context.Context) (string, error) {
		return p.releaseTo(ctx, id, author)
	})
}

// reassign is POST /held/{id}/reassign: bridge.Release with the author of the member picked
// (email:<the member's e-mail>), who must be among the workspace's members.
func (p *Page) reassign(w http.ResponseWriter, r *http.Request, s *session) error {
	id, member := r.PathValue("id"), r.PostFormValue("member")
	var author string
	if p.o.API != nil {
		ms, _, err := p.members.get(r.Context(), p.now())
		if err == nil {
			for _, m := range ms {
				if m.ID == member {
					author = "email:" + m.Email
				}
			}
		}
	}
	return p.act(w, r, s, "reassign", []string{id}, fmt.Sprintf("member %s (%s)", member, author), "/held", func(ctx context.Context) (string, error) {
		if author == "" {
			return "", fmt.Errorf("member %q is not among the workspace's members", member)
		}
		return p.releaseTo(ctx, id, author)
	})
}

// releaseTo releases held job id with author and says so.
func (p *Page) releaseTo(ctx context.Context, id, author string) (string, error) {
	j, err := bridge.Release(ctx, p.o.Store, id, author, p.now())
	if err != nil {
		return "", err
	}
	if author == "" {
		return fmt.Sprintf("%q (job %s) released: the bridge tries it again on its next step", j.Name, j.ID), nil
	}
	return fmt.Sprintf("%q (job %s) released with author %s: the bridge maps and uploads it on its next step", j.Name, j.ID, author), nil
}
