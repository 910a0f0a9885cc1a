package inspect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Recorder watches one run from inside its synctest bubble: the run's
// server, the store revision as each step begins, and who made each
// revision (the field manager, verb and subresource of the request, the
// step it happened in). Give the run the context Context returns; after
// the bubble has ended, Recording turns what it saw into plain data.
//
// A search's context tells it about every run made with it; each run
// starts afresh (Boot), so what it keeps is the last run's: a replay lists
// its search's variants first and replays last.
type Recorder struct {
	mu     sync.Mutex
	srv    *apiserver.Server
	starts []int64 // starts[n]: the store's revision as step n began
	cur    int
	writes map[int64]Write
}

// Context returns ctx carrying the recorder (explore.WithObserver).
func (r *Recorder) Context(ctx context.Context) context.Context {
	return explore.WithObserver(ctx, &explore.Observer{Boot: r.boot, Step: r.step})
}

func (r *Recorder) boot(srv *apiserver.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.srv, r.starts, r.cur, r.writes = srv, []int64{0}, 0, map[int64]Write{}
	srv.Observe(r.observe)
}

func (r *Recorder) step(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.starts) <= n {
		r.starts = append(r.starts, 0)
	}
	r.starts[n] = r.srv.Store().Rev()
	r.cur = n
}

func (r *Recorder) observe(w apiserver.Write) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range w.Events {
		r.writes[ev.Rev] = Write{Rev: ev.Rev, Step: r.cur, FieldManager: w.Manager, Verb: w.Verb, Subresource: w.Subresource}
	}
}

// Write is one revision of an object: which request made it, in which
// step, by whom.
type Write struct {
	Rev  int64 `json:"rev"`
	Step int   `json:"step"`
	// Time is the virtual time since the run's start.
	Time string `json:"time"`
	// Type is the watch event the revision is: ADDED, MODIFIED, DELETED.
	Type string `json:"type"`
	// Writer is the controller whose step made it (as the trace names it),
	// "action <name>" for a scenario's action, "server" for the simulated
	// kube-apiserver's own writes (start-up namespaces, the apiextensions
	// controllers' CRD status) or, for a write no trace record names (a
	// process's runnable, a follow-on of a write), its field manager.
	Writer       string    `json:"writer"`
	FieldManager string    `json:"fieldManager,omitempty"`
	Verb         verb.Verb `json:"verb,omitempty"`
	Subresource  string    `json:"subresource,omitempty"`
	// Changed summarises the write as the trace does (Op.Changed).
	Changed []string `json:"changed,omitempty"`
}

// Recording is a finished run as the inspect server serves it: the run's
// server (its store keeps every revision), the revision each step's state
// is at, and each revision's writer. It is plain data: nothing in it
// belongs to the bubble the run was made in (channels, timers, contexts).
type Recording struct {
	// ID names it: the finding's id, or the trace file's name.
	ID     string
	Server *apiserver.Server
	Trace  *trace.Trace
	// revs[n] is the revision of the state after step n (n = 0: before
	// the first step): what was stored as step n+1 began, or at the end.
	revs   []int64
	writes map[int64]Write
	start  time.Time
	// extras serves the events the controllers recorded and, when the
	// run's server does not, CRDs (events.go).
	extras *extras
}

// Recording returns what the recorder saw of the last run, whose trace is
// tr (the run's own trace bytes). Call it after the run's bubble ended.
func (r *Recorder) Recording(id string, tr []byte) (*Recording, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv == nil {
		return nil, fmt.Errorf("inspect: no run was made with the recorder's context")
	}
	t, err := trace.Read(strings.NewReader(string(tr)))
	if err != nil {
		return nil, fmt.Errorf("inspect: the run's trace: %w", err)
	}
	st := r.srv.Store()
	final := st.Rev()
	n := len(t.Steps)
	if t.Final != nil {
		n = t.Final.Steps
	}
	rec := &Recording{ID: id, Server: r.srv, Trace: t, writes: map[int64]Write{}}
	for i := 0; i <= n; i++ {
		rev := final
		if i+1 < len(r.starts) && r.starts[i+1] > 0 {
			rev = r.starts[i+1]
		}
		rec.revs = append(rec.revs, rev)
	}
	// The run started at the bubble's epoch; the first event is at it.
	if evs := st.Events(0, 1); len(evs) == 1 {
		rec.start = evs[0].Time
	}
	// Who made each revision: the trace's ops and actions name the
	// controller; the recorder the request.
	type tr2 struct {
		writer  string
		changed []string
	}
	named := map[int64]tr2{}
	for _, s := range t.Steps {
		for _, op := range s.Ops {
			if op.After == "" || op.After == op.Before || op.Outcome != "ok" { // a no-op names no revision
				continue
			}
			if rv, err := strconv.ParseInt(op.After, 10, 64); err == nil {
				named[rv] = tr2{s.Controller, op.Changed}
			}
		}
	}
	for _, a := range t.Actions {
		if rv, err := strconv.ParseInt(a.RV, 10, 64); err == nil {
			named[rv] = tr2{"action " + a.Name, a.Changed}
		}
	}
	for _, ev := range st.Events(0, final) {
		w, ok := r.writes[ev.Rev]
		if !ok {
			w = Write{Rev: ev.Rev, Writer: "server", FieldManager: "kube-apiserver"}
		}
		w.Type = string(ev.Type)
		w.Time = ev.Time.Sub(rec.start).String()
		if nm, ok := named[ev.Rev]; ok {
			w.Writer, w.Changed = nm.writer, nm.changed
		} else if w.Writer == "" {
			w.Writer = w.FieldManager
			if w.FieldManager == apiserver.CRDManager {
				w.Writer = "server"
			}
		}
		rec.writes[ev.Rev] = w
	}
	if err := rec.buildExtras(); err != nil {
		return nil, err
	}
	return rec, nil
}

// Steps is the number of steps of the run: the states served are 0 (before
// the first step) to Steps (after the last).
func (rec *Recording) Steps() int { return len(rec.revs) - 1 }

// Rev is the store revision of the state after step n.
func (rec *Recording) Rev(n int) int64 { return rec.revs[n] }

// Elapsed is the virtual time since the run's start at revision rev.
func (rec *Recording) Elapsed(rev int64) time.Duration {
	return rec.Server.Store().TimeOf(rev).Sub(rec.start)
}

// Time is the virtual time since the run's start at the end of step n
// (as the trace records it; 0 for step 0).
func (rec *Recording) Time(n int) time.Duration {
	if n == 0 {
		return 0
	}
	if r := rec.StepOf(n); r != nil {
		end := r.End
		if end == "" {
			end = r.T
		}
		if d, err := time.ParseDuration(end); err == nil {
			return d
		}
	}
	return rec.Elapsed(rec.Rev(n))
}

// History lists the writes of key up to revision upto (0: all), oldest
// first.
func (rec *Recording) History(key store.Key, upto int64) []Write {
	var out []Write
	for _, ev := range rec.Server.Store().Events(0, upto) {
		if ev.Key == key {
			out = append(out, rec.writes[ev.Rev])
		}
	}
	return out
}

// StepOf returns the trace's record of step n (nil for 0 or none).
func (rec *Recording) StepOf(n int) *trace.Step {
	for i := range rec.Trace.Steps {
		if rec.Trace.Steps[i].Step == n {
			return &rec.Trace.Steps[i]
		}
	}
	return nil
}
