package status

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// forgetView is the confirmation step of a forget: what it would do (a dry run of
// bridge.Forget), and whether the page can do it (a Deleter configured).
type forgetView struct {
	Job     *bridge.Job
	Actions []string
	Err     string
	CanDo   bool
}

// forgetConfirm is GET /jobs/{id}/forget: the dry run of bridge forget --job, and a form that
// does it.
func (p *Page) forgetConfirm(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	j, err := p.o.Store.Job(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	v := forgetView{Job: j, CanDo: p.o.Deleter != nil}
	out, err := bridge.Forget(ctx, p.o.Store, p.o.Deleter, bridge.ForgetTarget{JobID: j.ID}, p.who(r, s), true, p.now(), p.copies)
	for _, f := range out {
		v.Actions = append(v.Actions, f.Actions...)
	}
	if err != nil {
		v.Err = err.Error()
	}
	return p.render(w, r, s, http.StatusOK, "forget.html", "Forget job "+j.ID, v)
}

// copies removes the exports' local copies of a transcription (export.RemoveCopies).
func (p *Page) copies(ctx context.Context, id string, dryRun bool) ([]string, error) {
	return export.RemoveCopies(ctx, p.o.Store, id, dryRun)
}

// forget is POST /jobs/{id}/forget (confirm=forget): bridge.Forget of the job, as bridge forget
// --job does, written to the audit log.
func (p *Page) forget(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "forget" {
		return refuse(http.StatusBadRequest, "forget: confirm on the job's forget page first")
	}
	return p.act(w, r, s, "forget", []string{id}, "--job "+id, "/jobs/"+id, func(ctx context.Context) (string, error) {
		if p.o.Deleter == nil {
			return "", fmt.Errorf("forget needs the API, which this page was not given")
		}
		out, err := bridge.Forget(ctx, p.o.Store, p.o.Deleter, bridge.ForgetTarget{JobID: id}, p.who(r, s), false, p.now(), p.copies)
		if err != nil {
			return "", err
		}
		var acts []string
		for _, f := range out {
			acts = append(acts, f.Actions...)
		}
		if len(acts) == 0 {
			return "job " + id + ": nothing to do, forgotten already", nil
		}
		return "job " + id + " forgotten: " + strings.Join(acts, "; "), nil
	})
}
