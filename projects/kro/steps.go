package kro

import (
	"github.com/go-logr/logr"
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
const (
	dynamicLoggerName = "dynamic-controller"
	dynamicStepName   = "dynamic"
	msgItemBegins     = "Syncing object"
	msgItemEnds       = "Finished syncing object"
)

// stepLogger is the logger the harness hands NewDynamicController.
func stepLogger(mgr *ctrlsim.Manager) logr.Logger {
	begin, end := mgr.Steps(dynamicStepName)
	return logr.New(&stepSink{delegate: mgr.GetLogger().GetSink(), begin: begin, end: end})
}

type stepSink struct {
	delegate logr.LogSink // nil: discard
	name     string       // the last WithName
	begin    func(reconcile.Request)
	end      func()
}

func (s *stepSink) Init(info logr.RuntimeInfo) {
	if s.delegate != nil {
		s.delegate.Init(info)
	}
}

// Enabled is true for V(1), where the item lines are, whatever the
// delegate logs.
func (s *stepSink) Enabled(level int) bool {
	return level <= 1 || s.delegate != nil && s.delegate.Enabled(level)
}

func (s *stepSink) Info(level int, msg string, kv ...any) {
	if level == 1 && s.name == dynamicLoggerName {
		switch msg {
		case msgItemBegins:
			var req reconcile.Request
			for i := 0; i+1 < len(kv); i += 2 {
				if k, _ := kv[i].(string); k == "key" {
					req.NamespacedName, _ = kv[i+1].(types.NamespacedName)
				}
			}
			s.begin(req)
		case msgItemEnds:
			s.end()
		}
	}
	if s.delegate != nil && s.delegate.Enabled(level) {
		s.delegate.Info(level, msg, kv...)
	}
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
