package kro

import (
	"fmt"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/kubernetes-sigs/kro/pkg/dynamiccontroller"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// The DynamicController's items as engine steps.
//
// Upstream's DynamicController takes instances from a private workqueue
// (dynamic_controller.go:166-186 at v0.9.4, no option to supply one). What
// it does offer is the logger it is constructed with: for every item,
// syncFunc (dynamic_controller.go:314-349) logs "Syncing object" at V(1)
// on the worker goroutine before calling the instance handler, and
// "Finished syncing object" in a deferred function after the handler
// returned (its panic recovered). stepSink stands in front of the
// manager's log sink and turns those two lines of the logger named
// "dynamic-controller" into the engine's BeginStep and EndStep
// (ctrlsim.Manager.Steps): each item becomes a step "kro/dynamic" whose
// request is the instance, with its calls as ops. Everything is still
// logged as before. A release whose messages change would leave the
// instance reconciles outside any step; TestSmoke fails then (it requires
// "kro/dynamic" steps).
//
// The same logger marks every queue.Add made on a goroutine other than the
// worker's: enqueueParent logs "Enqueueing object" at V(1) just before its
// Add (dynamic_controller.go:360-362; the parent informer's handlers and
// enqueueExistingInstances come through it) and enqueueInstance logs
// "Coordinator routed event to instance" at V(2) just before its Add
// (:372-373; child and external events). stepSink makes each a sync point
// (ctrlsim.Manager.SyncPoint): a listener's Add waits until the explorer
// releases it at a quiescent point, after the worker woken by an earlier
// Add has taken its item. Without it, whether Register's two Adds of an
// existing instance (the informer's replay and enqueueExistingInstances)
// give one reconcile or two was decided by the Go scheduler (see
// main_test.go). The worker's own re-adds (:287-304) follow its item's
// EndStep on the worker goroutine and race with nothing. A release that
// renames these lines makes the Adds unordered again; the scenarios'
// run-twice check (TestScenarios, under two Ps) would notice, and TestSmoke
// fails when no "Enqueueing object" line became a sync point.
const (
	dynamicLoggerName = "dynamic-controller"
	dynamicStepName   = "dynamic"
	msgItemBegins     = "Syncing object"
	msgItemEnds       = "Finished syncing object"
	msgEnqueue        = "Enqueueing object"                    // V(1)
	msgRouted         = "Coordinator routed event to instance" // V(2)
)

// enqueueSyncs counts the "Enqueueing object" lines made sync points, so
// TestSmoke can pin that upstream still logs them (a renamed line would
// silently leave the Adds unordered).
var enqueueSyncs atomic.Int64

// routedSyncs counts the "Coordinator routed event to instance" lines
// made sync points (a child's event routed to its instance), for TestSmoke
// to pin the same way.
var routedSyncs atomic.Int64

// stepLogger is the logger the harness hands NewDynamicController.
func stepLogger(mgr *ctrlsim.Manager) logr.Logger {
	begin, end := mgr.Steps(dynamicStepName)
	return logr.New(&stepSink{delegate: mgr.GetLogger().GetSink(), begin: begin, end: end, sync: mgr.SyncPoint})
}

type stepSink struct {
	delegate logr.LogSink // nil: discard
	name     string       // the last WithName
	begin    func(reconcile.Request)
	end      func()
	sync     func(what string)
}

func (s *stepSink) Init(info logr.RuntimeInfo) {
	if s.delegate != nil {
		s.delegate.Init(info)
	}
}

// Enabled is true for V(1) and V(2), where the item and enqueue lines
// are, whatever the delegate logs.
func (s *stepSink) Enabled(level int) bool {
	return level <= 2 || s.delegate != nil && s.delegate.Enabled(level)
}

func (s *stepSink) Info(level int, msg string, kv ...any) {
	if level == 2 && s.name == dynamicLoggerName && msg == msgRouted {
		routedSyncs.Add(1)
		s.sync("kro/enqueue routed " + objectIdentifiers(kv))
	}
	if level == 1 && s.name == dynamicLoggerName {
		switch msg {
		case msgEnqueue:
			enqueueSyncs.Add(1)
			s.sync("kro/enqueue " + objectIdentifiers(kv) + " " + fmt.Sprint(kvValue(kv, "eventType")))
		case msgItemBegins:
			var req reconcile.Request
			req.NamespacedName, _ = kvValue(kv, "key").(types.NamespacedName)
			s.begin(req)
		case msgItemEnds:
			s.end()
		}
	}
	if s.delegate != nil && s.delegate.Enabled(level) {
		s.delegate.Info(level, msg, kv...)
	}
}

// objectIdentifiers names the instance an enqueue line is about: its
// resource, namespace and name.
func objectIdentifiers(kv []any) string {
	if oi, ok := kvValue(kv, "objectIdentifiers").(dynamiccontroller.ObjectIdentifiers); ok {
		return oi.GVR.Resource + "." + oi.GVR.Group + " " + oi.NamespacedName.String()
	}
	return "?"
}

// kvValue is the value of key in a log line's key/value pairs, nil if absent.
func kvValue(kv []any, key string) any {
	for i := 0; i+1 < len(kv); i += 2 {
		if k, _ := kv[i].(string); k == key {
			return kv[i+1]
		}
	}
	return nil
}

func (s *stepSink) Error(err error, msg string, kv ...any) {
	if s.delegate != nil {
		s.delegate.Error(err, msg, kv...)
	}
}

func (s *stepSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	if s.delegate != nil {
		c.delegate = s.delegate.WithValues(kv...)
	}
	return &c
}

func (s *stepSink) WithName(name string) logr.LogSink {
	c := *s
	c.name = name
	if s.delegate != nil {
		c.delegate = s.delegate.WithName(name)
	}
	return &c
}
