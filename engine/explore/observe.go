package explore

import (
	"context"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// Observer is told about a run as it goes, for tools that look at a run's
// cluster afterwards (engine/inspect: `make inspect`). It changes nothing
// in the run: its functions only read. Set it on the context a run is
// given (WithObserver); every run of a search made with that context tells
// it, each starting with Boot.
type Observer struct {
	// Boot is called once the run's server is booted, before anything
	// else happens in the run: the server the run writes to.
	Boot func(srv *apiserver.Server)
	// Step is called as step n begins (its number as the trace gives it),
	// before it makes any call: the store holds what the steps before it,
	// and what happened between them, wrote.
	Step func(n int)
}

type observerKey struct{}

// WithObserver returns ctx carrying o for the runs made with it.
func WithObserver(ctx context.Context, o *Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

func observerOf(ctx context.Context) *Observer {
	o, _ := ctx.Value(observerKey{}).(*Observer)
	return o
}

// observeBoot and observeStep tell the run's observer, if it has one.
func (w *world) observeBoot() {
	if o := observerOf(w.ctx); o != nil && o.Boot != nil {
		o.Boot(w.srv)
	}
}

func (w *world) observeStep() {
	if o := observerOf(w.ctx); o != nil && o.Step != nil {
		o.Step(w.step)
	}
}
