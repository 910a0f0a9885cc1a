package apiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubefeatures "k8s.io/kubernetes/pkg/features"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Bind answers POST pods/<name>/binding (a core/v1 Binding) as
// kube-apiserver v1.36.3 does: the create handler's part
// (k8s.io/apiserver/pkg/endpoints/handlers/create.go createHandler) and the
// admission plugins that act on a binding here, then kube's own
// BindingREST.Create (k8s.io/kubernetes/pkg/registry/core/pod/storage,
// podstorage.go), unmodified, over kube's etcd3 storage of the server's
// store. In order:
//
//   - the handler keeps the body's uid and resourceVersion (BindingREST is
//     a SubresourceObjectMetaPreserver) and checks its namespace against the
//     request's (rest.EnsureObjectNamespaceMatchesRequestNamespace: 400);
//   - admission: NamespaceLifecycle (a missing namespace 404, a terminating
//     one 403, admitNamespace) and PodTopologyLabels (feature gate
//     PodTopologyLabelsAdmission, on by default): a binding whose
//     target.kind is exactly "Node" gets the node's
//     topology.kubernetes.io/zone and topology.kubernetes.io/region labels
//     added to its own labels (admitTopologyLabels, restated);
//   - BindingREST.Create: the URL's name must be the body's (400),
//     ValidatePodBinding's aggregate (a 500, not a 422), the binding's uid
//     and resourceVersion as storage preconditions (409), a pod being
//     deleted, already assigned or with scheduling gates a 409 on
//     pods/binding; otherwise GuaranteedUpdate sets spec.nodeName, clears
//     status.nominatedNodeName, merges annotations, copies labels and sets
//     PodScheduled True, straight to storage (no strategy, no field
//     manager: managed fields and generation stay); nothing is written on a
//     dry run;
//   - the answer is a Success Status, code 201 (the create handler's).
//
// The write is reported to observers as a create of the pods/binding
// subresource of the pod.
//
// Simplified (also in doc.go): PodTopologyLabels reads the node from the
// store, where the real plugin reads an informer cache (a node created just
// before the binding may not be in it yet); no other admission (validating
// admission policies, webhooks) runs on the binding; the legacy
// namespaces/<ns>/bindings resource (LegacyBindingREST) is not served. The
// PodScheduled condition's lastTransitionTime is stamped by
// podutil.UpdatePodCondition with metav1.Now: the engine's clock in a run
// (time.Now in the run's bubble), not a Server's Options.Clock that differs
// from it. The Conflicts ablation drops the binding's resourceVersion before
// BindingREST sees it.
func (s *Server) Bind(req Request, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	podKind, ok := s.kinds[schema.GroupKind{Kind: "Pod"}]
	if !ok {
		return nil, notFoundResource(corev1.SchemeGroupVersion.WithKind("Pod"))
	}
	key := storeKey(podKind, req.Namespace, req.Name)
	var rvBefore string
	if old, _, ok := s.store.Peek(key, 0); ok {
		rvBefore = old.GetResourceVersion()
	}
	rev := s.store.Rev()
	out, err := s.bind(podKind, req, body)
	var stored *unstructured.Unstructured
	if err == nil && s.store.Rev() != rev {
		stored, _, _ = s.store.Peek(key, 0)
	}
	return out, s.report(podKind, Write{Verb: verb.Create, Subresource: "binding", Key: key, Manager: req.FieldManager, RVBefore: rvBefore}, stored, err)
}

// bind is Bind's work: the response, or the error.
func (s *Server) bind(podKind *Kind, req Request, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	v1b := &corev1.Binding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(body.Object, v1b); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("binding: %v", err))
	}
	// createHandler: the body's namespace must be the request's (or empty).
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForResource(req.Namespace, podKind.GVK.GroupVersion().WithResource(podKind.Resource)), v1b); err != nil {
		return nil, err
	}
	binding := &api.Binding{}
	if err := legacyscheme.Scheme.Convert(v1b, binding, nil); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("binding: %v", err))
	}
	// Mutating admission, before BindingREST.Create.
	target := &unstructured.Unstructured{}
	target.SetName(req.Name)
	if err := s.admitNamespace(podKind, target, req.Namespace, req.DryRun); err != nil {
		return nil, err
	}
	s.admitTopologyLabels(binding)
	if s.ablate.Conflicts {
		binding.ResourceVersion = ""
	}
	ps, err := s.podStorage()
	if err != nil {
		return nil, err
	}
	opts := &metav1.CreateOptions{}
	if req.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), req.Namespace)
	if _, err := ps.Binding.Create(ctx, req.Name, binding, nil, opts); err != nil {
		return nil, err
	}
	return bindingSuccess(), nil
}

// topologyLabels are the labels the PodTopologyLabels admission plugin
// copies from a binding's node (its defaultConfig, unexported in
// k8s.io/kubernetes/plugin/pkg/admission/podtopologylabels).
var topologyLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// admitTopologyLabels is the PodTopologyLabels admission plugin's
// admitBinding (restated: the plugin reads nodes from an informer it must
// be given and started): when the feature gate is on and the target's kind
// is "Node", the node's topology labels are added to the binding's labels
// (a missing node adds none).
func (s *Server) admitTopologyLabels(binding *api.Binding) {
	if !utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodTopologyLabelsAdmission) || binding.Target.Kind != "Node" {
		return
	}
	nodeKind, ok := s.kinds[schema.GroupKind{Kind: "Node"}]
	if !ok {
		return
	}
	node, _, ok := s.store.Peek(storeKey(nodeKind, "", binding.Target.Name), 0)
	if !ok {
		return
	}
	nodeLabels := node.GetLabels()
	for _, l := range topologyLabels {
		v, ok := nodeLabels[l]
		if !ok {
			continue
		}
		if binding.Labels == nil {
			binding.Labels = map[string]string{}
		}
		binding.Labels[l] = v
	}
}

func bindingSuccess() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Status", "status": metav1.StatusSuccess, "code": int64(http.StatusCreated)}}
}
