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
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Bind answers POST pods/<name>/binding (a core/v1 Binding), as
// kube-apiserver v1.36.3 does: its create handler
// (k8s.io/apiserver/pkg/endpoints/handlers/create.go createHandler), the
// admission plugins that act on a binding, and BindingREST.Create
// (k8s.io/kubernetes/pkg/registry/core/pod/storage/storage.go: Create,
// assignPod, setPodNodeAndMetadata; unexported methods of a type bound to
// the generic registry's etcd storage, so restated here around the
// exported pieces they call). In order:
//
//   - the handler keeps the body's uid and resourceVersion (BindingREST is
//     a SubresourceObjectMetaPreserver) and checks its namespace against the
//     request's (rest.EnsureObjectNamespaceMatchesRequestNamespace: 400);
//   - admission: NamespaceLifecycle (a missing namespace 404, a terminating
//     one 403, admitNamespace) and PodTopologyLabels (feature gate
//     PodTopologyLabelsAdmission, on by default): a binding whose
//     target.kind is exactly "Node" gets the node's
//     topology.kubernetes.io/zone and topology.kubernetes.io/region labels
//     added to its own labels;
//   - a body whose name is not the URL's is 400 ("name in URL does not
//     match name in Binding object"; an empty name too: the name comes from
//     the URL);
//   - validation.ValidatePodBinding (target.kind Node or empty, target.name
//     required), returned as BindingREST returns it — an aggregate, not an
//     API status — so the client sees the 500 responsewriters makes of it
//     (not a 422);
//   - the pod is read (404 on pods if missing); the binding's uid and
//     resourceVersion, when set, are storage preconditions
//     (storage.Preconditions.Check: 409 Conflict on pods); then, as
//     setPodNodeAndMetadata's update function: a pod being deleted, already
//     assigned (spec.nodeName set) or with scheduling gates is refused with
//     409 Conflict on pods/binding ("pod p is already assigned to node
//     \"n\"", ...); otherwise spec.nodeName is set, status.nominatedNodeName
//     cleared (ClearingNominatedNodeNameAfterBinding, on by default), the
//     binding's annotations merged into the pod's, its labels copied over
//     the pod's (PodTopologyLabelsAdmission), and the PodScheduled
//     condition set True with podutil.UpdatePodCondition;
//   - the pod is written straight to storage (GuaranteedUpdate): no
//     strategy, no field manager, so the pod's managed fields and
//     generation stay as they were; a new resourceVersion and a MODIFIED
//     watch event; nothing is written on a dry run;
//   - the answer is a Success Status, code 201 (the create handler's).
//
// The write is reported to observers as a create of the pods/binding
// subresource of the pod, by the caller.
//
// Simplified (also in doc.go): PodTopologyLabels reads the node from the
// store, where the real plugin reads an informer cache (a node created just
// before the binding may not be in it yet); UpdatePodCondition stamps the
// wall clock, which the engine replaces with its own; a precondition's
// error message names the storage key with the default "/registry" prefix;
// no other admission (validating admission policies, webhooks) runs on the
// binding; the legacy namespaces/<ns>/bindings resource (LegacyBindingREST)
// is not served.
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
	out, stored, err := s.bind(podKind, req, body)
	return out, s.report(podKind, Write{Verb: verb.Create, Subresource: "binding", Key: key, Manager: req.FieldManager, RVBefore: rvBefore}, stored, err)
}

// bind is Bind's work: the response and, when it wrote, the stored pod.
func (s *Server) bind(podKind *Kind, req Request, body *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured, error) {
	v1b := &corev1.Binding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(body.Object, v1b); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("binding: %v", err))
	}
	// createHandler: the body's namespace must be the request's (or empty).
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForResource(req.Namespace, podKind.GVK.GroupVersion().WithResource(podKind.Resource)), v1b); err != nil {
		return nil, nil, err
	}
	binding := &api.Binding{}
	if err := legacyscheme.Scheme.Convert(v1b, binding, nil); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("binding: %v", err))
	}
	// Mutating admission, before BindingREST.Create.
	target := &unstructured.Unstructured{}
	target.SetName(req.Name)
	if err := s.admitNamespace(podKind, target, req.Namespace, req.DryRun); err != nil {
		return nil, nil, err
	}
	s.admitTopologyLabels(binding)

	// BindingREST.Create.
	if req.Name != binding.Name {
		return nil, nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if errs := validation.ValidatePodBinding(binding); len(errs) != 0 {
		return nil, nil, errs.ToAggregate()
	}
	stored, err := s.assignPod(podKind, req, binding)
	if err != nil {
		// assignPod's error interpretation.
		err = storeerr.InterpretGetError(err, api.Resource("pods"), req.Name)
		err = storeerr.InterpretUpdateError(err, api.Resource("pods"), req.Name)
		if _, ok := err.(*apierrors.StatusError); !ok {
			err = apierrors.NewConflict(api.Resource("pods/binding"), req.Name, err)
		}
		return nil, nil, err
	}
	return bindingSuccess(), stored, nil
}

// assignPod is the storage's GuaranteedUpdate with setPodNodeAndMetadata's
// preconditions and update function; it returns the stored pod (nil on a
// dry run) or an error as the storage layer gives it.
func (s *Server) assignPod(podKind *Kind, req Request, binding *api.Binding) (*unstructured.Unstructured, error) {
	key := storeKey(podKind, req.Namespace, req.Name)
	// The etcd key, as storage errors name it (kube-apiserver's default
	// prefix).
	etcdKey := "/registry/pods/" + req.Namespace + "/" + req.Name
	cur, rev, ok := s.store.Peek(key, 0)
	if !ok {
		return nil, storage.NewKeyNotFoundError(etcdKey, 0)
	}
	obj, err := s.toInternal(podKind, cur)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object: %#v", obj)
	}
	if binding.UID != "" || binding.ResourceVersion != "" {
		pre := &storage.Preconditions{}
		if binding.UID != "" {
			uid := binding.UID
			pre.UID = &uid
		}
		if binding.ResourceVersion != "" && !s.ablate.Conflicts {
			rv := binding.ResourceVersion
			pre.ResourceVersion = &rv
		}
		if err := pre.Check(etcdKey, pod); err != nil {
			return nil, err
		}
	}
	// setPodNodeAndMetadata's update function.
	if pod.DeletionTimestamp != nil {
		return nil, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	}
	if pod.Spec.NodeName != "" {
		return nil, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	}
	if len(pod.Spec.SchedulingGates) != 0 {
		return nil, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = binding.Target.Name
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.ClearingNominatedNodeNameAfterBinding) {
		pod.Status.NominatedNodeName = ""
	}
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string)
	}
	for k, v := range binding.Annotations {
		pod.Annotations[k] = v
	}
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodTopologyLabelsAdmission) && len(binding.Labels) > 0 {
		// copyLabelsWithOverwriting.
		if pod.Labels == nil {
			pod.Labels = make(map[string]string)
		}
		for k, v := range binding.Labels {
			pod.Labels[k] = v
		}
	}
	_, before := podutil.GetPodCondition(&pod.Status, api.PodScheduled)
	transitions := before == nil || before.Status != api.ConditionTrue
	podutil.UpdatePodCondition(&pod.Status, &api.PodCondition{Type: api.PodScheduled, Status: api.ConditionTrue})
	if transitions {
		// UpdatePodCondition stamps metav1.Now(): the engine's clock instead.
		if _, c := podutil.GetPodCondition(&pod.Status, api.PodScheduled); c != nil {
			c.LastTransitionTime = s.metaNow()
		}
	}
	next, err := s.fromInternal(podKind, pod)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		return nil, nil
	}
	return s.store.Put(key, next, rev)
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
