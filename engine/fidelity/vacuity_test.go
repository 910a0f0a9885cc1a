package fidelity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// The suite proves its cases are not vacuous. caseSemantics names, for the
// API-server semantics the engine can switch off (apiserver.AblationTable),
// the cases that exercise them. `make fidelity` (FIDELITY_VACUITY=1)
// runs the suite, then, per ablation, every case that names it again on an
// engine with that semantic switched off: each must then disagree with the
// real server's recorded observation. One that still agrees does not test
// what it names and is reported as vacuous. FIDELITY_VACUITY=discover
// prints, per ablation, every case that disagrees with it off (what a case
// could name), without failing.
//
// The table lists the cases written to test each semantic (by what they
// are about, not by what happens to break); semantics with no ablation
// (stringData, namespace lifecycle, ...) cannot be switched off yet, so
// they are not listed.
var caseSemantics = func() map[string][]string {
	m := map[string][]string{}
	for sem, cs := range map[string][]string{
		"generation": {"widget/generation", "deploy/generation", "gadget/finalizer-generation",
			"widget/labels-only-patch-generation", "deploy/finalizer-delete-generation",
			// Built-in strategies (linked): which writes bump generation.
			"deploy/replicas-null-reset", "deploy/more-validation", "deploy/apply-env-list-map", "sts/immutable-fields",
			"ds/create-defaults-and-immutable-selector", "rs/scale-subresource", "job/template-immutable",
			"pdb/create-validation-and-generation", "eps/create-and-validation", "pod/spec-immutable"},
		"resourceVersionConflicts": {"cm/update-stale-rv", "cm/merge-patch-optimistic-lock", "cm/json-patch-rv-test",
			"cm/ssa-stale-rv", "cm/delete-preconditions", "widget/status-update-stale", "widget/update-stale-rv",
			"widget/optimistic-lock-patch", "deploy/status-update-stale", "deploy/update-stale-and-empty-rv",
			"widget/update-empty-rv", "gadget/update-empty-rv-and-noop", "lease/create-update-validation",
			"lease/update-without-rv",
			// A binding's resourceVersion is a storage precondition.
			"pod/binding-refused"},
		"noopWrites": {"cm/update-noop", "cm/merge-patch-noop", "cm/ssa-noop", "widget/update-noop",
			"gadget/update-empty-rv-and-noop",
			// A body without the server's defaults (or allocated values) is
			// a no-op once decoded and defaulted.
			"deploy/update-without-defaults-noop", "sts/update-without-defaults-noop", "ds/update-without-defaults-noop",
			"rs/update-without-defaults-noop", "job/update-without-defaults-noop", "svc/update-without-defaults-noop",
			"pdb/update-without-defaults-noop", "eps/update-without-defaults-noop", "pod/update-without-defaults-noop",
			"svc/update-without-clusterip-keeps-it"},
		"statusSubresource": {"widget/status-subresource", "widget/create-defaults-drops-status", "deploy/status-update",
			"deploy/status-patch", "deploy/main-update-ignores-status", "deploy/create-drops-status",
			"widget/ssa-main-ignores-status", "widget/managed-fields-status-vs-main", "status/metadata-through-status",
			"scaler/scale-noop-and-status", "widget/status-update-metadata-changes",
			"sts/status-and-scale", "job/status-subresource", "pdb/status-subresource", "pod/status-subresource",
			"svc/status-subresource", "status-validate/deploy", "status-validate/ds", "status-validate/rs",
			"status-validate/sts", "status-validate/job", "status-validate/pdb"},
		"finalizers":    {"cm/finalizer-delete-lifecycle", "cm/finalizer-removed-by-patch", "gadget/finalizer-generation", "crd/delete-terminating"},
		"applyReplaces": {"cm/ssa-conflict", "cm/ssa-shared-ownership", "cm/ssa-two-controller-owners"},
		"crValidation": {"widget/validation", "crv/schema-values", "crv/cel-rules", "crv/status-subresource",
			"crv/ratcheting", "crformat/date-time", "crformat/cidr", "crformat/int32"},
		"fieldValidation": {"fieldvalidation/cm-create", "fieldvalidation/cm-update", "fieldvalidation/cm-patch",
			"fieldvalidation/cm-apply", "fieldvalidation/cm-strategic-patch", "fieldvalidation/widget-create",
			"fieldvalidation/widget-update", "fieldvalidation/widget-patch", "fieldvalidation/widget-apply",
			"fieldvalidation/duplicate-fields"},
	} {
		for _, c := range cs {
			m[c] = append(m[c], sem)
		}
	}
	return m
}()

func checkVacuity(t *testing.T, discover bool, scheme *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition, results []caseResult) {
	known := apiserver.AblationNames()
	byName := map[string]caseResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	for c, sems := range caseSemantics {
		if _, ok := byName[c]; !ok {
			t.Errorf("vacuity: caseSemantics names unknown case %q", c)
		}
		for _, s := range sems {
			if !slices.Contains(known, s) {
				t.Errorf("vacuity: case %q names %q, which is not an ablation (%s)", c, s, strings.Join(known, ", "))
			}
		}
	}
	ctx := context.Background()
	for _, ab := range known {
		var abl apiserver.Ablations
		if err := abl.Set(ab); err != nil {
			t.Fatal(err)
		}
		engC, err := engineSide(t, scheme, crds, abl)
		if err != nil {
			t.Fatalf("vacuity: engine with %s off: %v", ab, err)
		}
		var named, vacuous, disagreeing []string
		for i, c := range cases {
			naming := slices.Contains(caseSemantics[c.Name], ab)
			if !naming && !discover {
				continue
			}
			r := byName[c.Name]
			if r.Real == nil {
				continue
			}
			ns := caseNamespace(i, c.Name)
			_ = engC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.FieldOwner(fieldOwner))
			o := runCase(c, engC, ns)
			// It exercises the semantic if switching it off changes what
			// differs from the real server.
			now := compare(r.Real, o)
			slices.Sort(now)
			before := slices.Clone(r.Diff)
			slices.Sort(before)
			differs := !slices.Equal(now, before)
			if differs {
				disagreeing = append(disagreeing, c.Name)
			}
			if naming {
				named = append(named, c.Name)
				if !differs {
					vacuous = append(vacuous, c.Name)
				}
			}
		}
		if discover {
			fmt.Printf("vacuity discover: with %s off, %d cases disagree: %s\n", ab, len(disagreeing), strings.Join(disagreeing, " "))
		}
		fmt.Printf("vacuity: %s: %d cases name it, %d vacuous\n", ab, len(named), len(vacuous))
		if len(named) == 0 && !discover {
			t.Errorf("vacuity: no case names %s", ab)
		}
		for _, v := range vacuous {
			t.Errorf("vacuity: case %s names %s but agrees with the real server with %s switched off (vacuous)", v, ab, ab)
		}
	}
}
