package explore

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// reconcile runs one step.
func (w *world) reconcile(c *ctrl, req reconcile.Request, choice *trace.Choice) {
	w.step++
	rec := &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: c.name, Request: req.String(), Choice: choice}
	w.cur, w.curCtrl = rec, c
	c.stepWrite = 0
	clear(w.lastRead)
	w.res.Steps = w.step
	cap := c.cap
	ctx := log.IntoContext(w.ctx, cap.Logger(req))
	var res reconcile.Result
	var err error
	var panicked any
	var stack string
	func() {
		defer func() {
			if r := recover(); r != nil {
				panicked = r
				stack = string(debug.Stack())
			}
		}()
		res, err = cap.Reconciler.Reconcile(ctx, req)
	}()
	rec.End = fmtDur(w.now())
	if _, ok := panicked.(crashSignal); ok || c.proc.crashed {
		rec.Result = "crash"
		c.proc.crashes++
		what := "controller restarted: queue dropped"
		if len(c.proc.ctrls) > 1 {
			what = fmt.Sprintf("process %s restarted: its %d controllers' queues dropped", c.proc.spec.Name, len(c.proc.ctrls))
		}
		rec.Notes = append(rec.Notes, fmt.Sprintf("crash injected at write %d of this reconcile (%s); %s, informers re-listed", c.stepWrite, c.proc.crashedBy, what))
		w.cur, w.curCtrl = nil, nil
		if err := w.startProcess(c.proc); err != nil {
			rec.Error = "restart failed: " + err.Error()
		}
		_ = w.tw.Write(rec)
		return
	}
	c.q.Done(req)
	switch {
	case panicked != nil:
		rec.Result = "panic"
		rec.Panic = fmt.Sprint(panicked)
		w.res.Panics = append(w.res.Panics, oracle.PanicRecord{Controller: c.name, Step: w.step, Value: fmt.Sprint(panicked), Stack: stack})
		c.q.AddRateLimited(req)
		rec.Requeue = w.dueIn(c, req)
	case err != nil:
		rec.Error = err.Error()
		if errors.Is(err, reconcile.TerminalError(nil)) {
			rec.Result = "terminal"
			c.q.Forget(req)
		} else {
			rec.Result = "error"
			c.q.AddRateLimited(req)
			rec.Requeue = w.dueIn(c, req)
		}
	case res.RequeueAfter > 0:
		rec.Result = "requeueAfter"
		c.q.Forget(req)
		c.q.AddAfter(req, res.RequeueAfter)
		rec.Requeue = "+" + res.RequeueAfter.String()
	case res.Requeue: //nolint:staticcheck // controller-runtime still honours it
		rec.Result = "requeue"
		c.q.AddRateLimited(req)
		rec.Requeue = w.dueIn(c, req)
	default:
		rec.Result = "ok"
		c.q.Forget(req)
	}
	w.cur, w.curCtrl = nil, nil
	_ = w.tw.Write(rec)
}

func (w *world) dueIn(c *ctrl, req reconcile.Request) string {
	if t, ok := c.q.waiting[req]; ok {
		return "+" + time.Until(t).String()
	}
	return "+0s"
}
