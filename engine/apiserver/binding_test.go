package apiserver_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/store"
)

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// bindingBody is a core/v1 Binding as a request body.
func bindingBody(t *testing.T, b *corev1.Binding) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Binding")
	return u
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestBinding pins pods/binding as kube-apiserver's BindingREST answers it
// (apiserver/binding.go): the pod assigned with its annotations and labels
// merged and PodScheduled True, written straight to storage (managed fields
// and generation unchanged, one MODIFIED event, a create of pods/binding
// to observers); and each refusal with its code, reason and message.
func TestBinding(t *testing.T) {
	const ns = "default"
	target := corev1.ObjectReference{Kind: "Node", Name: "n1"}
	bind := func(name string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Target: target}
	}
	cases := []struct {
		name string
		// pod edits the pod created first ("p"); noPod: none is created.
		pod   func(*corev1.Pod)
		noPod bool
		// setup runs after the pod is created (c is the test client).
		setup   func(t *testing.T, srv *apiserver.Server, c client.Client, p *corev1.Pod)
		binding func(p *corev1.Pod) *corev1.Binding
		urlNS   string // the namespace in the URL; "" = "default"
		dryRun  bool
		// wantCode 0: success.
		wantCode   int32
		wantReason metav1.StatusReason
		wantMsg    string
		check      func(t *testing.T, before, after *corev1.Pod)
	}{
		{name: "success sets nodeName, condition, annotations and labels",
			pod: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"keep": "1", "over": "old"}
				p.Labels = map[string]string{"app": "a", "over": "old"}
			},
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Annotations = map[string]string{"over": "new", "added": "2"}
				b.Labels = map[string]string{"over": "new"}
				return b
			},
			check: func(t *testing.T, before, after *corev1.Pod) {
				if after.Spec.NodeName != "n1" {
					t.Errorf("nodeName %q", after.Spec.NodeName)
				}
				if want := map[string]string{"keep": "1", "over": "new", "added": "2"}; !apiequality.Semantic.DeepEqual(after.Annotations, want) {
					t.Errorf("annotations %v, want %v", after.Annotations, want)
				}
				if want := map[string]string{"app": "a", "over": "new"}; !apiequality.Semantic.DeepEqual(after.Labels, want) {
					t.Errorf("labels %v, want %v", after.Labels, want)
				}
				c := condition(after, corev1.PodScheduled)
				if c == nil || c.Status != corev1.ConditionTrue || c.LastTransitionTime.IsZero() || !c.LastProbeTime.IsZero() || c.Reason != "" {
					t.Errorf("PodScheduled %+v", c)
				}
				if after.Generation != before.Generation || !apiequality.Semantic.DeepEqual(after.ManagedFields, before.ManagedFields) {
					t.Errorf("generation %d -> %d, managedFields %v -> %v", before.Generation, after.Generation, before.ManagedFields, after.ManagedFields)
				}
				if after.ResourceVersion == before.ResourceVersion {
					t.Errorf("resourceVersion unchanged")
				}
			}},
		{name: "an unschedulable condition becomes True",
			setup: func(t *testing.T, _ *apiserver.Server, c client.Client, p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes"}}
				p.Status.NominatedNodeName = "n1"
				must(t, c.Status().Update(t.Context(), p))
			},
			binding: func(*corev1.Pod) *corev1.Binding { return bind("p") },
			check: func(t *testing.T, before, after *corev1.Pod) {
				c := condition(after, corev1.PodScheduled)
				if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "" || len(after.Status.Conditions) != 1 {
					t.Errorf("conditions %+v", after.Status.Conditions)
				}
				if after.Status.NominatedNodeName != "" {
					t.Errorf("nominatedNodeName %q kept", after.Status.NominatedNodeName)
				}
			}},
		{name: "topology labels from a Node target",
			setup: func(t *testing.T, _ *apiserver.Server, c client.Client, _ *corev1.Pod) {
				must(t, c.Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
					Labels: map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", corev1.LabelHostname: "n1"}}}))
			},
			binding: func(*corev1.Pod) *corev1.Binding { return bind("p") },
			check: func(t *testing.T, _, after *corev1.Pod) {
				if want := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}; !apiequality.Semantic.DeepEqual(after.Labels, want) {
					t.Errorf("labels %v, want %v", after.Labels, want)
				}
			}},
		{name: "no topology labels for an empty target kind",
			setup: func(t *testing.T, _ *apiserver.Server, c client.Client, _ *corev1.Pod) {
				must(t, c.Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}}}))
			},
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Target.Kind = ""
				return b
			},
			check: func(t *testing.T, _, after *corev1.Pod) {
				if len(after.Labels) != 0 || after.Spec.NodeName != "n1" {
					t.Errorf("labels %v nodeName %q", after.Labels, after.Spec.NodeName)
				}
			}},
		{name: "fresh uid and resourceVersion preconditions",
			binding: func(p *corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.UID, b.ResourceVersion = p.UID, p.ResourceVersion
				return b
			}},
		{name: "already assigned",
			pod:      func(p *corev1.Pod) { p.Spec.NodeName = "n0" },
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("p") },
			wantCode: 409, wantReason: metav1.StatusReasonConflict,
			wantMsg: `Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n0"`},
		{name: "name mismatch",
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("q") },
			wantCode: 400, wantReason: metav1.StatusReasonBadRequest,
			wantMsg: "name in URL does not match name in Binding object"},
		{name: "empty name",
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("") },
			wantCode: 400, wantReason: metav1.StatusReasonBadRequest,
			wantMsg: "name in URL does not match name in Binding object"},
		{name: "namespace mismatch",
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Namespace = "other"
				return b
			},
			wantCode: 400, wantReason: metav1.StatusReasonBadRequest,
			wantMsg: "the namespace of the provided object does not match the namespace sent on the request"},
		{name: "missing target name",
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Target.Name = ""
				return b
			},
			// An aggregate, not an API status: responsewriters' 500.
			wantCode: 500, wantReason: "", wantMsg: "target.name: Required value"},
		{name: "target kind not Node",
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Target.Kind = "Pod"
				return b
			},
			wantCode: 500, wantReason: "", wantMsg: `target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"`},
		{name: "deleting pod",
			pod: func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} },
			setup: func(t *testing.T, _ *apiserver.Server, c client.Client, p *corev1.Pod) {
				must(t, c.Delete(t.Context(), p))
			},
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("p") },
			wantCode: 409, wantReason: metav1.StatusReasonConflict,
			wantMsg: `Operation cannot be fulfilled on pods/binding "p": pod p is being deleted, cannot be assigned to a host`},
		{name: "scheduling gates",
			pod:      func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}} },
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("p") },
			wantCode: 409, wantReason: metav1.StatusReasonConflict,
			wantMsg: `Operation cannot be fulfilled on pods/binding "p": pod p has non-empty .spec.schedulingGates`},
		{name: "uid precondition",
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.UID = "00000000-0000-0000-0000-000000000000"
				return b
			},
			wantCode: 409, wantReason: metav1.StatusReasonConflict},
		{name: "stale resourceVersion precondition",
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.ResourceVersion = "1"
				return b
			},
			wantCode: 409, wantReason: metav1.StatusReasonConflict},
		{name: "dry run writes nothing",
			binding: func(*corev1.Pod) *corev1.Binding { return bind("p") },
			dryRun:  true,
			check: func(t *testing.T, before, after *corev1.Pod) {
				if !apiequality.Semantic.DeepEqual(before, after) {
					t.Errorf("dry run changed the pod: %+v", after)
				}
			}},
		{name: "dry run still refuses",
			pod:      func(p *corev1.Pod) { p.Spec.NodeName = "n0" },
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("p") },
			dryRun:   true,
			wantCode: 409, wantReason: metav1.StatusReasonConflict},
		{name: "pod not found",
			noPod:    true,
			binding:  func(*corev1.Pod) *corev1.Binding { return bind("p") },
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMsg: `pods "p" not found`},
		{name: "missing namespace",
			noPod: true,
			binding: func(*corev1.Pod) *corev1.Binding {
				b := bind("p")
				b.Namespace = ""
				return b
			},
			urlNS:    "absent",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMsg: `namespaces "absent" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newServer(t, apiserver.Ablations{})
			ctx := t.Context()
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
			if tc.pod != nil {
				tc.pod(p)
			}
			if !tc.noPod {
				must(t, c.Create(ctx, p))
			}
			if tc.setup != nil {
				tc.setup(t, srv, c, p)
			}
			before := &corev1.Pod{}
			if !tc.noPod {
				must(t, c.Get(ctx, client.ObjectKeyFromObject(p), before))
			}
			var writes []apiserver.Write
			srv.Observe(func(w apiserver.Write) { writes = append(writes, w) })
			reqNS := ns
			if tc.urlNS != "" {
				reqNS = tc.urlNS
			}
			out, err := srv.Create(apiserver.Request{GVK: podGVK, Namespace: reqNS, Name: "p", Subresource: "binding",
				FieldManager: "scheduler", DryRun: tc.dryRun}, bindingBody(t, tc.binding(before)))

			if tc.wantCode != 0 {
				var st apierrors.APIStatus
				if !errors.As(err, &st) {
					t.Fatalf("err %v, want a %d", err, tc.wantCode)
				}
				s := st.Status()
				if s.Code != tc.wantCode || s.Reason != tc.wantReason || (tc.wantMsg != "" && s.Message != tc.wantMsg) {
					t.Errorf("got %d %q %q, want %d %q %q", s.Code, s.Reason, s.Message, tc.wantCode, tc.wantReason, tc.wantMsg)
				}
				if len(writes) != 1 || writes[0].Err == nil || len(writes[0].Events) != 0 {
					t.Errorf("writes %+v, want one refused", writes)
				}
			} else {
				must(t, err)
				if out.GetKind() != "Status" || out.Object["status"] != metav1.StatusSuccess || out.Object["code"] != int64(201) {
					t.Errorf("response %v", out.Object)
				}
				wantEvents := 1
				if tc.dryRun {
					wantEvents = 0
				}
				if len(writes) != 1 {
					t.Fatalf("writes %+v, want one", writes)
				}
				w := writes[0]
				if w.Verb != "create" || w.Subresource != "binding" || w.Key.Name != "p" || w.Key.GroupKind.Kind != "Pod" || w.Manager != "scheduler" ||
					w.RVBefore != before.ResourceVersion || len(w.Events) != wantEvents || w.Err != nil {
					t.Errorf("write %+v", w)
				}
				if wantEvents == 1 && (w.Events[0].Type != store.Modified || w.RVAfter == w.RVBefore) {
					t.Errorf("event %+v", w.Events[0])
				}
			}
			if tc.check != nil {
				after := &corev1.Pod{}
				must(t, c.Get(ctx, client.ObjectKeyFromObject(p), after))
				tc.check(t, before, after)
			}
		})
	}
}
