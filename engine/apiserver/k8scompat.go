package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/registry/rest"
)

// Differences between the Kubernetes lines the engine builds against (the
// pinned k8s.io/kubernetes v1.36 with k8s.io/apiserver v0.36, and v1.37 with
// v0.37, which controller-runtime v0.25 pulls; make engine-crcheck builds
// and tests both), bridged here so the same source compiles on each:
//
//   - rest.RESTUpdateStrategy's AllowCreateOnUpdate and
//     AllowUnconditionalUpdate take a context from v0.37 on
//     (k8s.io/apiserver@v0.37.2 pkg/registry/rest/update.go:49 and :88:
//     AllowCreateOnUpdate(ctx context.Context) bool; @v0.36.4
//     pkg/registry/rest/update.go:43 and :82: AllowCreateOnUpdate() bool;
//     called here from linked.go, allowUnconditionalUpdate and
//     allowCreateOnUpdate). No strategy
//     the engine links reads the context in v1.37 (each returns a constant,
//     as in v1.36); the engine passes the request context it builds for
//     the strategies (strategyContext), so a strategy that starts reading
//     it sees what kube-apiserver would give it.
//
// The method sets are matched at run time, through interfaces of either
// shape, so no build tag is needed.

// strategyAllowsCreateOnUpdate is st.AllowCreateOnUpdate on either line.
func strategyAllowsCreateOnUpdate(ctx context.Context, st rest.RESTUpdateStrategy) bool {
	switch s := any(st).(type) {
	case interface{ AllowCreateOnUpdate(context.Context) bool }: // v0.37
		return s.AllowCreateOnUpdate(ctx)
	case interface{ AllowCreateOnUpdate() bool }: // v0.36
		return s.AllowCreateOnUpdate()
	}
	panic(fmt.Sprintf("%T: rest.RESTUpdateStrategy without an AllowCreateOnUpdate the engine knows (k8s.io/apiserver changed it again: see k8scompat.go)", st))
}

// strategyAllowsUnconditionalUpdate is st.AllowUnconditionalUpdate on
// either line.
func strategyAllowsUnconditionalUpdate(ctx context.Context, st rest.RESTUpdateStrategy) bool {
	switch s := any(st).(type) {
	case interface{ AllowUnconditionalUpdate(context.Context) bool }: // v0.37
		return s.AllowUnconditionalUpdate(ctx)
	case interface{ AllowUnconditionalUpdate() bool }: // v0.36
		return s.AllowUnconditionalUpdate()
	}
	panic(fmt.Sprintf("%T: rest.RESTUpdateStrategy without an AllowUnconditionalUpdate the engine knows (k8s.io/apiserver changed it again: see k8scompat.go)", st))
}
