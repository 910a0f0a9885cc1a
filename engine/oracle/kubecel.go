package oracle

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apiserver/pkg/cel/environment"
)

// kubeEnv is the environment every scenario expression (state predicates,
// triggers, write oracles) is compiled in: Kubernetes' own CEL base
// environment, as the pinned k8s.io/apiserver builds it for new
// expressions at its default compatibility version (what a CRD's
// x-kubernetes-validations rule or a ValidatingAdmissionPolicy written
// today gets: environment.MustBaseEnvSet(DefaultCompatibilityVersion()),
// NewExpressions), extended with opts.
//
// So expressions have Kubernetes' libraries, with kube's own
// implementations and cost estimates: quantity() (isLessThan, compareTo,
// asApproximateFloat, add, ...), lists (sum, min, max, indexOf,
// lastIndexOf, isSorted), regex (find, findAll), url(), ip(), cidr(),
// format, semver() (isLessThan, compareTo, major, ...), sets, two-variable
// comprehensions, optional types, cross-type numeric comparisons and
// homogeneous aggregate literals. On top of it, as before the base
// environment was adopted: cel-go's ext.Strings at its latest version (kube
// pins an older one; scenarios may use the newer string functions) and
// ext.Bindings (cel.bind).
//
// Cost: kube's runtime cost tracking (library.CostEstimator) is the base
// environment's; its per-call limit (celconfig.PerCallLimit, for one CRD
// rule on one object) is replaced by CostLimit, since a scenario predicate
// ranges over the whole cluster state.
func kubeEnv(opts ...cel.EnvOption) (*cel.Env, error) {
	base, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.NewExpressions)
	if err != nil {
		return nil, err
	}
	return base.Extend(append([]cel.EnvOption{ext.Strings(), ext.Bindings()}, opts...)...)
}
