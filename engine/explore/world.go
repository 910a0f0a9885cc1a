package explore

import (
	"context"
	"errors"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Chooser decides at choice points. options are in FIFO order; returning 0
// everywhere gives the reference schedule.
type Chooser interface {
	Choose(step int, options []string) int
}

// FIFO is the reference chooser.
type FIFO struct{}

// Choose implements Chooser.
func (FIFO) Choose(int, []string) int { return 0 }

// PanicRecord is an upstream panic caught inside Reconcile.
type PanicRecord struct {
	Controller string
	Step       int
	Value      string
	Stack      string
}

// Snapshot summarises the state after a step, for non-convergence checks.
type Snapshot struct {
	Step int
	// Hash covers the normalised store and the queues; StoreHash the store.
	Hash      string
	StoreHash string
	Writes    int
	Pending   int
}

// Result is the outcome of one run.
type Result struct {
	Trace     []byte
	Final     State
	FinalHash string
	Stop      string
	Steps     int
	// Pending counts queued requests and waiting timers at the end.
	Pending   int
	Panics    []PanicRecord
	Snapshots []Snapshot
	// Choices taken at each choice point, and the options offered.
	Choices []trace.Choice
	// ChoiceSteps[i] is the step at which Choices[i] was made.
	ChoiceSteps []int
	// Invariant failures: step at which each invariant first failed (-1: never).
	InvariantFailedAt []int
	InvariantErr      []string
	// Writes is the number of successful writes per controller.
	Writes map[string]int
	// WriteRecords feed the lost-update oracle.
	WriteRecords []WriteRecord
	// header and steps kept for callers that append verdicts.
	tw     *trace.Writer
	header trace.Header
}

// TraceSoFar returns the trace without a final record.
func (r *Result) TraceSoFar() []byte { return r.tw.Bytes() }

// Finish appends the final record with the verdicts and returns the trace.
func (r *Result) Finish(verdicts []trace.Verdict) []byte {
	_ = r.tw.Write(trace.Final{Type: "final", Steps: r.Steps, T: fmtDur(r.Final.Time), Stop: r.Stop, Pending: r.Pending,
		StateHash: r.FinalHash, Verdicts: verdicts})
	r.Trace = r.tw.Bytes()
	return r.Trace
}

type window struct {
	w       Window
	open    bool
	closed  bool
	openAt  time.Time
	openRev int64
}

type ctrl struct {
	spec      Controller
	mgr       *ctrlsim.Manager
	cap       *ctrlsim.Captured
	q         *queue
	pos       map[schema.GroupKind]int64
	crashed   bool
	crashes   int
	stepWrite int
}

type world struct {
	ctx      context.Context
	cfg      *Config
	chooser  Chooser
	start    time.Time
	srv      *apiserver.Server
	env      *ctrlsim.Env
	ctrls    []*ctrl
	byName   map[string]*ctrl
	seq      int64
	step     int
	writeLog []writeRec
	stale    []*window // parallel to cfg.Staleness
	drops    []*window
	orders   []*window
	actions  []bool // done
	syncing  map[syncKey]bool
	// lost-update bookkeeping: the last writer of each key, and what the
	// current step's controller last read of each key.
	lastWrites map[string]lastWrite
	lastRead   map[string]string
	// the last store hash and the revision it was taken at
	lastStoreHash string
	lastStoreRev  int64
	snapWrites    int // len(writeLog) at the last snapshot
	tw            *trace.Writer
	cur           *trace.Step
	curCtrl       *ctrl
	res           *Result
}

type writeRec struct {
	controller string
	gk         schema.GroupKind
	verb, sub  string
}

type runDirKey struct{}

// RunDir returns a directory private to the current run, which outlives
// controller restarts within the run (like a pod's emptyDir) and is removed
// when the run ends. Setup functions use it for on-disk state.
func RunDir(ctx context.Context) string {
	dir, _ := ctx.Value(runDirKey{}).(string)
	return dir
}

var errCrashed = errors.New("explore: the controller process has crashed (injected); this call was not made")

type crashSignal struct{}

// Run executes one run of cfg with chooser inside the caller's bubble.
func Run(ctx context.Context, cfg *Config, chooser Chooser) (*Result, error) {
	if chooser == nil {
		chooser = FIFO{}
	}
	w := &world{ctx: ctx, cfg: cfg, chooser: chooser, start: time.Now(), byName: map[string]*ctrl{},
		tw: trace.NewWriter(), res: &Result{Writes: map[string]int{}}}
	w.res.tw = w.tw
	w.syncing = map[syncKey]bool{}
	w.lastWrites = map[string]lastWrite{}
	w.lastRead = map[string]string{}
	dir, err := os.MkdirTemp("", "ctrlbugs-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	w.ctx = context.WithValue(ctx, runDirKey{}, dir)
	for range cfg.Staleness {
		w.stale = append(w.stale, &window{})
	}
	for i := range cfg.Staleness {
		w.stale[i].w = cfg.Staleness[i].Window
	}
	for i := range cfg.Drops {
		w.drops = append(w.drops, &window{w: cfg.Drops[i].Window})
	}
	for i := range cfg.Orderings {
		w.orders = append(w.orders, &window{w: cfg.Orderings[i].Window})
	}
	w.actions = make([]bool, len(cfg.Actions))
	w.res.InvariantFailedAt = make([]int, len(cfg.Invariants))
	w.res.InvariantErr = make([]string, len(cfg.Invariants))
	for i := range w.res.InvariantFailedAt {
		w.res.InvariantFailedAt[i] = -1
	}
	if err := w.boot(); err != nil {
		return nil, err
	}
	if err := w.loop(); err != nil {
		return nil, err
	}
	return w.res, nil
}

func (w *world) now() time.Duration { return time.Since(w.start) }

func fmtDur(d time.Duration) string { return d.Round(time.Microsecond).String() }

func (w *world) boot() error {
	srv, err := apiserver.New(apiserver.Options{Scheme: w.cfg.Cluster.Scheme, Ablations: w.cfg.Cluster.Ablations})
	if err != nil {
		return err
	}
	if w.cfg.Cluster.Install != nil {
		if err := w.cfg.Cluster.Install(srv); err != nil {
			return fmt.Errorf("installing kinds: %w", err)
		}
	}
	w.srv = srv
	w.env = ctrlsim.NewEnv(srv)
	var names []string
	for _, c := range w.cfg.Controllers {
		names = append(names, c.Name)
	}
	h := trace.Header{Type: "header", Schema: trace.Schema, Scenario: w.cfg.Scenario, Run: w.cfg.Run, Variant: w.cfg.Variant, Mode: "run",
		Seed: w.cfg.Seed, Engine: EngineVersion, Upstream: w.cfg.Upstream, Controllers: names,
		Perturbations: w.cfg.PerturbationNames, Ablations: w.cfg.Cluster.Ablations.Names()}
	w.res.header = h
	if err := w.tw.Write(h); err != nil {
		return err
	}
	for _, obj := range w.cfg.Objects {
		if _, err := w.userWrite("create", obj, nil, "", ""); err != nil {
			return fmt.Errorf("initial object %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	w.openWindows()
	for _, spec := range w.cfg.Controllers {
		c := &ctrl{spec: spec}
		w.ctrls = append(w.ctrls, c)
		w.byName[spec.Name] = c
		if err := w.startController(c); err != nil {
			return err
		}
	}
	return nil
}

// EngineVersion is recorded in every trace header.
const EngineVersion = "ctrlbugs-engine/0.1"

func (w *world) startController(c *ctrl) error {
	c.pos = map[schema.GroupKind]int64{}
	c.crashed = false
	mgr, err := ctrlsim.NewManager(w.env, c.spec.Name, &hooks{w: w, c: c}, c.spec.Manager)
	if err != nil {
		return err
	}
	mgr.SetInformerStart(func(gk schema.GroupKind) int64 {
		if p, ok := c.pos[gk]; ok {
			return p
		}
		p := w.visible(c, gk)
		c.pos[gk] = p
		return p
	})
	c.mgr = mgr
	if err := c.spec.Setup(w.ctx, mgr); err != nil {
		return fmt.Errorf("controller %s: setup: %w", c.spec.Name, err)
	}
	if len(mgr.Controllers()) != 1 {
		return fmt.Errorf("controller %s: setup built %d controllers; register exactly one per name", c.spec.Name, len(mgr.Controllers()))
	}
	c.cap = mgr.Controllers()[0]
	return mgr.StartControllers(w.ctx, func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		c.q = newQueue(w, c.spec.Name, rl)
		return c.q
	})
}

// userWrite applies a user action or initial object as identity "user".
func (w *world) userWrite(op string, obj *unstructured.Unstructured, patch []byte, pt string, prop metav1.DeletionPropagation) (*unstructured.Unstructured, error) {
	w.env.Lock()
	defer w.env.Unlock()
	before := w.srv.Store().Rev()
	defer func() {
		for _, ev := range w.srv.Store().Events(before, 0) {
			rv := strconv.FormatInt(ev.Rev, 10)
			w.recordWrite("user", &ctrlsim.Op{Verb: op, RVBefore: strconv.FormatInt(ev.Rev-1, 10), RVAfter: rv})
		}
	}()
	req := apiserver.Request{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), FieldManager: "user"}
	switch op {
	case "create":
		return w.srv.Create(req, obj)
	case "update":
		cur, err := w.srv.Get(req)
		if err != nil {
			return nil, err
		}
		o := obj.DeepCopy()
		if o.GetResourceVersion() == "" {
			o.SetResourceVersion(cur.GetResourceVersion())
		}
		return w.srv.Update(req, o)
	case "patch":
		return w.srv.Patch(req, typesPatch(pt), patch)
	case "delete":
		opts := metav1.DeleteOptions{}
		if prop != "" {
			opts.PropagationPolicy = &prop
		}
		return w.srv.Delete(req, opts)
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

// visible returns the revision controller c's informer for gk may show now.
func (w *world) visible(c *ctrl, gk schema.GroupKind) int64 {
	w.openWindows()
	latest := w.srv.Store().Rev()
	rev := latest
	now := time.Now()
	for i, s := range w.cfg.Staleness {
		win := w.stale[i]
		if s.Controller != c.spec.Name || s.Kind != gk || !win.open || win.closed {
			continue
		}
		var r int64
		switch s.Mode {
		case "frozen":
			r = win.openRev
		default: // lag
			r = w.srv.Store().RevAt(now.Add(-s.Lag))
			if r < win.openRev && win.openAt.After(now.Add(-s.Lag)) {
				// The informer had already seen openRev when the lag began.
				r = win.openRev
			}
		}
		rev = min(rev, r)
	}
	if p, ok := c.pos[gk]; ok && p > rev {
		rev = p // an informer never goes back
	}
	return rev
}

// sync delivers to c's informers of gk every event up to what is visible.
// As in a shared informer, the cache moves one event at a time and each
// handler runs after its event is in the cache; a cache read made from a
// handler (map functions list through the cache) sees the cache as it is
// and delivers nothing further for that kind.
func (w *world) sync(c *ctrl, gk schema.GroupKind) int64 {
	key := syncKey{c, gk}
	if w.syncing[key] {
		return c.pos[gk]
	}
	rev := w.visible(c, gk)
	from := c.pos[gk]
	if rev <= from {
		return from
	}
	w.syncing[key] = true
	defer delete(w.syncing, key)
	notify := !w.dropping(c, gk)
	evs := w.srv.Store().Events(from, rev)
	// Handlers may call clients: deliver without holding the server lock.
	w.env.Unlock()
	defer w.env.Lock()
	for _, ev := range evs {
		if ev.Key.GroupKind != gk {
			continue
		}
		c.pos[gk] = ev.Rev
		for _, inf := range c.mgr.Cache().Informers() {
			if inf.GVK.GroupKind() != gk {
				continue
			}
			if err := inf.Deliver(ev, notify); err != nil {
				w.note(fmt.Sprintf("delivery to %s failed: %v", c.spec.Name, err))
			}
		}
	}
	for _, inf := range c.mgr.Cache().Informers() {
		if inf.GVK.GroupKind() == gk {
			inf.Pos = rev
		}
	}
	c.pos[gk] = rev
	return rev
}

type syncKey struct {
	c  *ctrl
	gk schema.GroupKind
}

func (w *world) dropping(c *ctrl, gk schema.GroupKind) bool {
	for i, d := range w.cfg.Drops {
		if d.Controller == c.spec.Name && d.Kind == gk && w.drops[i].open && !w.drops[i].closed {
			return true
		}
	}
	return false
}

// syncAll brings every informer of every controller up to its view.
func (w *world) syncAll() {
	for _, c := range w.ctrls {
		for _, gk := range informerKinds(c) {
			w.env.Lock()
			w.sync(c, gk)
			w.env.Unlock()
		}
	}
}

func informerKinds(c *ctrl) []schema.GroupKind {
	var out []schema.GroupKind
	for _, inf := range c.mgr.Cache().Informers() {
		gk := inf.GVK.GroupKind()
		if !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	return out
}

func (w *world) note(s string) {
	if w.cur != nil {
		w.cur.Notes = append(w.cur.Notes, s)
	}
}

// reconcile runs one step.
func (w *world) reconcile(c *ctrl, req reconcile.Request, choice *trace.Choice) {
	w.step++
	rec := &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: c.spec.Name, Request: req.String(), Choice: choice}
	w.cur, w.curCtrl = rec, c
	c.stepWrite = 0
	clear(w.lastRead)
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
	if _, ok := panicked.(crashSignal); ok || c.crashed {
		rec.Result = "crash"
		c.crashes++
		rec.Notes = append(rec.Notes, fmt.Sprintf("crash injected at write %d; controller restarted: queue dropped, informers re-listed", c.stepWrite))
		w.cur, w.curCtrl = nil, nil
		if err := w.startController(c); err != nil {
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
		w.res.Panics = append(w.res.Panics, PanicRecord{Controller: c.spec.Name, Step: w.step, Value: fmt.Sprint(panicked), Stack: stack})
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
		return "+" + t.Sub(time.Now()).String()
	}
	return "+0s"
}

// errorReason names an API error for traces.
func errorReason(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, errCrashed) {
		return "Crashed"
	}
	if r := apierrors.ReasonForError(err); r != "" {
		return string(r)
	}
	return "Error"
}

func kindString(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

func keyString(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
