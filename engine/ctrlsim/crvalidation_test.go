package ctrlsim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// gizmoCRD has what custom-resource validation checks: types, an enum, a
// required field, bounds, a pattern, list-type invariants, CEL rules on
// the object and a transition rule (oldSelf), a status schema checked on
// the status subresource, a scale subresource, and defaults. maxName is
// spec.name's maxLength (a later, stricter CRD shows ratcheting).
func gizmoCRD(maxName int) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.test.ctrlbugs.dev
spec:
  group: test.ctrlbugs.dev
  names: {kind: Gizmo, listKind: GizmoList, plural: gizmos, singular: gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            x-kubernetes-validations:
            - rule: self.minReplicas <= self.replicas
              message: minReplicas must not exceed replicas
            - rule: self.mode == oldSelf.mode
              message: mode is immutable
            properties:
              mode: {type: string, enum: [fast, slow]}
              name: {type: string, maxLength: %d, pattern: '^[a-z]+$'}
              replicas: {type: integer, minimum: 0, default: 1}
              minReplicas: {type: integer, default: 0}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer, minimum: 0}
`, maxName)
}

var gizmoGVR = schema.GroupVersionResource{Group: "test.ctrlbugs.dev", Version: "v1", Resource: "gizmos"}

func gizmo(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("test.ctrlbugs.dev/v1")
	u.SetKind("Gizmo")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

// crPath is one way a process reaches the server: the direct client
// (controller-runtime's client over the engine, as Reconcile uses it) or
// the REST seam (client-go's dynamic client over the manager's
// rest.Config, as upstream code that builds its own clients uses it).
type crPath struct {
	name   string
	create func(ctx context.Context, u *unstructured.Unstructured) error
	update func(ctx context.Context, u *unstructured.Unstructured, status bool) error
	patch  func(ctx context.Context, name, body string) error
	get    func(ctx context.Context, name string) (*unstructured.Unstructured, error)
}

func crPaths(t *testing.T, ablate apiserver.Ablations) ([]crPath, *apiserver.Server) {
	t.Helper()
	s := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(s))
	srv, err := apiserver.New(apiserver.Options{Scheme: s, Ablations: ablate})
	must(t, err)
	crds, err := apiserver.ReadCRDs([]byte(gizmoCRD(8)))
	must(t, err)
	must(t, srv.InstallCRD(crds[0]))
	env := ctrlsim.NewEnv(srv)
	mgr, err := ctrlsim.NewManager(env, "ctl", &recHooks{}, ctrlsim.ManagerOptions{})
	must(t, err)
	direct := ctrlsim.NewDirectClient(srv, s)
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	must(t, err)
	res := dyn.Resource(gizmoGVR).Namespace("default")
	return []crPath{
		{
			name:   "direct",
			create: func(ctx context.Context, u *unstructured.Unstructured) error { return direct.Create(ctx, u) },
			update: func(ctx context.Context, u *unstructured.Unstructured, status bool) error {
				if status {
					return direct.Status().Update(ctx, u)
				}
				return direct.Update(ctx, u)
			},
			patch: func(ctx context.Context, name, body string) error {
				return direct.Patch(ctx, gizmo(name, nil), client.RawPatch(types.MergePatchType, []byte(body)))
			},
			get: func(ctx context.Context, name string) (*unstructured.Unstructured, error) {
				u := gizmo(name, nil)
				return u, direct.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, u)
			},
		},
		{
			name: "seam",
			create: func(ctx context.Context, u *unstructured.Unstructured) error {
				_, err := res.Create(ctx, u, metav1.CreateOptions{})
				return err
			},
			update: func(ctx context.Context, u *unstructured.Unstructured, status bool) error {
				var err error
				if status {
					_, err = res.UpdateStatus(ctx, u, metav1.UpdateOptions{})
				} else {
					_, err = res.Update(ctx, u, metav1.UpdateOptions{})
				}
				return err
			},
			patch: func(ctx context.Context, name, body string) error {
				_, err := res.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
				return err
			},
			get: func(ctx context.Context, name string) (*unstructured.Unstructured, error) {
				return res.Get(ctx, name, metav1.GetOptions{})
			},
		},
	}, srv
}

// invalidCause is "" when err is nil, else the field and the message of
// each cause of a 422, or the error itself when it is anything else.
func invalidCause(err error) string {
	if err == nil {
		return ""
	}
	var st apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !asStatus(err, &st) || st.Status().Details == nil {
		return "not a 422: " + err.Error()
	}
	var out []string
	for _, c := range st.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return strings.Join(out, "; ")
}

func asStatus(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*st = s
	}
	return ok
}

// TestCRValidation: a custom resource its CRD does not admit is refused
// with 422 and apiextensions-apiserver's causes, through the direct client
// and the REST seam alike: schema types, enums, required fields, bounds,
// patterns, list sets, CEL rules (with a transition rule on oldSelf), the
// status schema on the status subresource; an update leaving a field that
// breaks a stricter schema as it was passes (ratcheting); unknown fields
// and nulls are dropped and defaults applied. With the validators removed
// (the crValidation ablation) every refused write succeeds, so the test
// fails without them.
func TestCRValidation(t *testing.T) {
	type write struct {
		name string
		do   func(ctx context.Context, p crPath) error
		// want: "" for success, else a substring of the causes.
		want string
	}
	valid := map[string]any{"mode": "fast", "name": "abc"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range valid {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	create := func(spec map[string]any) func(ctx context.Context, p crPath) error {
		return func(ctx context.Context, p crPath) error { return p.create(ctx, gizmo("x", spec)) }
	}
	writes := []write{
		{"wrong type", create(with("replicas", "three")), `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{"not in enum", create(with("mode", "medium")), `spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`},
		{"required missing", create(with("mode", nil)), `spec.mode: Required value`},
		{"below minimum", create(with("replicas", int64(-1))), `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`},
		{"pattern", create(with("name", "ABC")), `spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`},
		{"too long", create(with("name", "abcdefghij")), `spec.name: Too long: may not be more than 8 bytes`},
		{"duplicate in set", create(with("tags", []any{"a", "a"})), `spec.tags[1]: Duplicate value: "a"`},
		{"CEL rule", create(map[string]any{"mode": "fast", "replicas": int64(1), "minReplicas": int64(2)}), `spec: Invalid value: minReplicas must not exceed replicas`},
		{"valid create", create(valid), ""},
		{"CEL transition rule", func(ctx context.Context, p crPath) error {
			must(t, p.create(ctx, gizmo("t", valid)))
			return p.patch(ctx, "t", `{"spec":{"mode":"slow"}}`)
		}, `spec: Invalid value: mode is immutable`},
		{"valid update", func(ctx context.Context, p crPath) error {
			must(t, p.create(ctx, gizmo("u", valid)))
			return p.patch(ctx, "u", `{"spec":{"replicas":3}}`)
		}, ""},
		{"status schema on the status subresource", func(ctx context.Context, p crPath) error {
			must(t, p.create(ctx, gizmo("s", valid)))
			u, err := p.get(ctx, "s")
			must(t, err)
			u.Object["status"] = map[string]any{"replicas": int64(-2)}
			return p.update(ctx, u, true)
		}, `status.replicas: Invalid value: -2: replicas in body should be greater than or equal to 0`},
		{"scale path on update", func(ctx context.Context, p crPath) error {
			must(t, p.create(ctx, gizmo("r", valid)))
			return p.patch(ctx, "r", `{"spec":{"replicas":-5,"minReplicas":-6}}`)
		}, `spec.replicas: Invalid value: -5: should be a non-negative integer`},
	}
	for _, ablated := range []bool{false, true} {
		for _, path := range []string{"direct", "seam"} {
			for _, w := range writes {
				t.Run(fmt.Sprintf("ablated=%v/%s/%s", ablated, path, w.name), func(t *testing.T) {
					// Each write in a fresh server: names do not collide.
					paths, _ := crPaths(t, apiserver.Ablations{CRValidation: ablated})
					got := invalidCause(w.do(t.Context(), pathNamed(paths, path)))
					switch {
					case ablated && got != "":
						t.Errorf("with the validators removed: %s", got)
					case ablated:
					case w.want == "" && got != "":
						t.Errorf("refused: %s", got)
					case w.want != "" && !strings.Contains(got, w.want):
						t.Errorf("causes %q, want one containing %q", got, w.want)
					}
				})
			}
		}
	}

	t.Run("decoding", func(t *testing.T) {
		for _, path := range []string{"direct", "seam"} {
			ctx := t.Context()
			paths, _ := crPaths(t, apiserver.Ablations{})
			p := pathNamed(paths, path)
			spec := with("unknown", "x")
			spec["minReplicas"] = nil
			must(t, p.create(ctx, gizmo("d", spec)))
			got, err := p.get(ctx, "d")
			must(t, err)
			want := map[string]any{"mode": "fast", "name": "abc", "replicas": int64(1), "minReplicas": int64(0)}
			if fmt.Sprint(got.Object["spec"]) != fmt.Sprint(want) {
				t.Errorf("%s: stored spec %v, want %v (unknown field pruned, null dropped, defaults applied)", p.name, got.Object["spec"], want)
			}
		}
	})

	t.Run("ratcheting", func(t *testing.T) {
		for _, path := range []string{"direct", "seam"} {
			ctx := t.Context()
			paths, srv := crPaths(t, apiserver.Ablations{})
			p := pathNamed(paths, path)
			must(t, p.create(ctx, gizmo("old", with("name", "abcdef"))))
			// The CRD tightens spec.name to 3 characters.
			crds, err := apiserver.ReadCRDs([]byte(gizmoCRD(3)))
			must(t, err)
			must(t, srv.InstallCRD(crds[0]))
			if got := invalidCause(p.patch(ctx, "old", `{"spec":{"replicas":2}}`)); got != "" {
				t.Errorf("%s: an update leaving spec.name as it was: %s (ratcheting lets it pass)", p.name, got)
			}
			if got := invalidCause(p.patch(ctx, "old", `{"spec":{"name":"abcdefg"}}`)); !strings.Contains(got, "spec.name: Too long: may not be more than 3 bytes") {
				t.Errorf("%s: an update changing spec.name to a long value: %q, want Too long", p.name, got)
			}
			if got := invalidCause(p.create(ctx, gizmo("new", with("name", "abcdef")))); !strings.Contains(got, "spec.name: Too long") {
				t.Errorf("%s: a create under the stricter schema: %q, want Too long", p.name, got)
			}
		}
	})
}

func pathNamed(ps []crPath, name string) crPath {
	for _, p := range ps {
		if p.name == name {
			return p
		}
	}
	panic("no path " + name)
}
