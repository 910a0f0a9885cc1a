package inspect

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// StepInfo describes a step as /ctrlbugs/step and /ctrlbugs/steps give it.
type StepInfo struct {
	ID    string `json:"id"`
	Step  int    `json:"step"`
	Steps int    `json:"steps"`
	// Rev is the store revision of the state after the step.
	Rev int64 `json:"rev"`
	// Time is the virtual time since the run's start at the step's end.
	Time string `json:"time"`
	// Record is the trace's record of the step (absent for step 0).
	Record *trace.Step `json:"record,omitempty"`
}

func (s *Server) info(n int, full bool) StepInfo {
	rev := s.rec.Rev(n)
	si := StepInfo{ID: s.rec.ID, Step: n, Steps: s.rec.Steps(), Rev: rev, Time: s.rec.Time(n).String()}
	if full {
		si.Record = s.rec.StepOf(n)
	}
	return si
}

// History is an object's writes, as /ctrlbugs/history gives them.
type History struct {
	Object string  `json:"object"`
	Step   int     `json:"step"`
	Writes []Write `json:"writes"`
}

const help = `ctrlbugs inspect: %s, a recorded run served read-only as a Kubernetes API server.
Step %d of %d is served (0: before the first step).

GET  /ctrlbugs/step                 the step served: its revision, virtual time and trace record
POST /ctrlbugs/step?n=<step>        serve another step (n=next, n=prev also); open watches get
                                    the events in between when it is later, and end when earlier
GET  /ctrlbugs/steps                every step: revision, time, controller, request, result
GET  /ctrlbugs/history/<object's API path>[?all=true]
                                    the writes that made the object up to the step served (all:
                                    the whole run): revision, step, time, event type, writer (the
                                    controller, "action <name>", or the server), field manager,
                                    verb, subresource, what changed; e.g.
                                    kubectl get --raw /ctrlbugs/history/api/v1/namespaces/default/configmaps/x
Managed fields are served as stored: kubectl get -o yaml --show-managed-fields.
`

// ctrlbugs answers the server's own endpoints (/ctrlbugs/...).
func (s *Server) ctrlbugs(w http.ResponseWriter, req *http.Request, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case p == "":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintf(w, help, s.rec.ID, s.step, s.rec.Steps())
	case p == "step" && req.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.info(s.step, true))
	case p == "step" && req.Method == http.MethodPost:
		arg := req.URL.Query().Get("n")
		if arg == "" {
			// curl -d n=5 sends it as a form.
			body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<10))
			if v, err := url.ParseQuery(string(body)); err == nil {
				arg = v.Get("n")
			}
		}
		n, err := s.parseStep(arg)
		if err == nil {
			err = s.setStep(n)
		}
		if err != nil {
			writeStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		w.Header().Set("X-Ctrlbugs-Step", strconv.Itoa(n))
		writeJSON(w, http.StatusOK, s.info(n, true))
	case p == "step":
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "ctrlbugs/step"}, req.Method))
	case p == "steps":
		var out []StepInfo
		for n := 0; n <= s.rec.Steps(); n++ {
			si := s.info(n, false)
			if r := s.rec.StepOf(n); r != nil {
				si.Record = &trace.Step{Step: r.Step, T: r.T, End: r.End, Controller: r.Controller, Request: r.Request, Result: r.Result, Resumes: r.Resumes}
			}
			out = append(out, si)
		}
		writeJSON(w, http.StatusOK, out)
	case strings.HasPrefix(p, "history/"):
		s.history(w, req, strings.TrimPrefix(p, "history"))
	default:
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "ctrlbugs"}, p))
	}
}

func (s *Server) parseStep(arg string) (int, error) {
	switch arg {
	case "next":
		return s.step + 1, nil
	case "prev":
		return s.step - 1, nil
	case "":
		return 0, fmt.Errorf("POST /ctrlbugs/step needs n=<step> (or n=next, n=prev)")
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return 0, fmt.Errorf("n=%q: not a step number", arg)
	}
	return n, nil
}

// history answers /ctrlbugs/history/<an object's API path>. The caller
// holds mu.
func (s *Server) history(w http.ResponseWriter, req *http.Request, apiPath string) {
	r := req.Clone(req.Context())
	r.Method = http.MethodGet
	r.URL = &url.URL{Path: apiPath}
	ri, err := s.reqInfo.NewRequestInfo(r)
	if err != nil || !ri.IsResourceRequest || ri.Name == "" {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("/ctrlbugs/history%s: want an object's API path, such as /ctrlbugs/history/api/v1/namespaces/default/configmaps/name", apiPath)))
		return
	}
	_, rev, _ := s.at()
	var k = s.kindFor(ri, s.rec.Rev(s.rec.Steps()))
	if k == nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: ri.APIGroup, Resource: ri.Resource}, ri.Name))
		return
	}
	ns := ri.Namespace
	if !k.Namespaced {
		ns = ""
	}
	key := store.Key{GroupKind: k.GVK.GroupKind(), Namespace: ns, Name: ri.Name}
	upto := rev
	if req.URL.Query().Get("all") == "true" {
		upto = s.rec.Rev(s.rec.Steps())
	}
	h := History{Object: key.String(), Step: s.step, Writes: s.rec.History(key, upto)}
	if h.Writes == nil {
		h.Writes = []Write{}
	}
	writeJSON(w, http.StatusOK, h)
}
