package apiserver

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	applypolicyv1 "k8s.io/client-go/applyconfigurations/policy/v1"
	policyclient "k8s.io/client-go/kubernetes/typed/policy/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/policy"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Evict answers POST pods/<name>/eviction by kube-apiserver v1.36.3's own
// EvictionREST.Create (k8s.io/kubernetes/pkg/registry/core/pod/storage,
// eviction.go), unmodified, from the pod REST storage podstorage.go builds,
// after the create handler's part (the body's namespace against the
// request's). Everything the eviction decides is upstream's: dry run from
// the request or the eviction's delete options, pods that skip budgets
// (pending, terminal, deleting), the PodDisruptionBudgets whose policy/v1
// selector matches, unready pods under a healthy budget or
// unhealthyPodEvictionPolicy AlwaysAllow, checkAndDecrement (429 with the
// DisruptionBudget cause, Retry-After 10 s for a budget not yet processed;
// the budget's status write), the DisruptionTarget condition through the
// pod status store, and the pod's deletion through the generic registry
// (graceful for a pod bound to a node: registryDelete).
//
// The budgets are read and written through pdbClient, the loopback
// client's stand-in: kube-apiserver gives the REST a clientset over its
// own loopback connection, so the budget's status write is a request of
// its own, as "kube-apiserver", through the server's whole update path;
// here it is that request made to s directly.
//
// The writes the REST makes through the pod storage are reported to
// observers as one create of the pods/eviction subresource of the pod
// (the budget's status write, a request of its own, before it).
func (s *Server) Evict(req Request, body *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	podKind, ok := s.kinds[schema.GroupKind{Kind: "Pod"}]
	if !ok {
		return nil, notFoundResource(corev1.SchemeGroupVersion.WithKind("Pod"))
	}
	v1e := &policyv1.Eviction{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(body.Object, v1e); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("eviction: %v", err))
	}
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForResource(req.Namespace, podKind.GVK.GroupVersion().WithResource(podKind.Resource)), v1e); err != nil {
		return nil, err
	}
	ev := &policy.Eviction{}
	if err := legacyscheme.Scheme.Convert(v1e, ev, nil); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("eviction: %v", err))
	}
	ps, err := s.podStorage()
	if err != nil {
		return nil, err
	}
	key := storeKey(podKind, req.Namespace, req.Name)
	var rvBefore string
	if old, _, ok := s.store.Peek(key, 0); ok {
		rvBefore = old.GetResourceVersion()
	}
	opts := &metav1.CreateOptions{}
	if req.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), req.Namespace)
	out, err := ps.Eviction.Create(ctx, req.Name, ev, nil, opts)
	if err == nil {
		if st, ok := out.(*metav1.Status); ok && st.Status != metav1.StatusSuccess {
			// A Status the REST returns as its result (more than one
			// budget): the handler answers with its code.
			err = &apierrors.StatusError{ErrStatus: *st}
		}
	}
	if s.store.Rev() > s.notified {
		// The pod's writes (condition, deletion) through the pod storage.
		var stored *unstructured.Unstructured
		if cur, _, ok := s.store.Peek(key, 0); ok {
			stored = cur
		}
		err = s.report(podKind, Write{Verb: verb.Create, Subresource: "eviction", Key: key, Manager: req.FieldManager, RVBefore: rvBefore}, stored, err)
	}
	if err != nil {
		return nil, apiError(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Status", "status": metav1.StatusSuccess, "code": int64(http.StatusCreated)}}, nil
}

// pdbClient is the PodDisruptionBudget client kube-apiserver gives the
// eviction REST (a loopback clientset), answered by s: the REST lists
// budgets, reads one again on a conflict, and writes a budget's status.
// Its requests are made as "kube-apiserver" (the loopback client's user
// agent, whence the field manager), with the options the REST passes
// (dry run). The calls the REST does not make are refused with an error
// naming them.
type pdbClient struct{ s *Server }

var _ policyclient.PodDisruptionBudgetsGetter = pdbClient{}

// PodDisruptionBudgets implements policyclient.PodDisruptionBudgetsGetter.
func (c pdbClient) PodDisruptionBudgets(namespace string) policyclient.PodDisruptionBudgetInterface {
	return pdbs{s: c.s, ns: namespace}
}

type pdbs struct {
	s  *Server
	ns string
}

var pdbGVK = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")

const loopbackManager = "kube-apiserver"

func (p pdbs) typed(u *unstructured.Unstructured) (*policyv1.PodDisruptionBudget, error) {
	out := &policyv1.PodDisruptionBudget{}
	return out, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}

func (p pdbs) Get(_ context.Context, name string, _ metav1.GetOptions) (*policyv1.PodDisruptionBudget, error) {
	u, err := p.s.Get(Request{GVK: pdbGVK, Namespace: p.ns, Name: name})
	if err != nil {
		return nil, err
	}
	return p.typed(u)
}

func (p pdbs) List(_ context.Context, opts metav1.ListOptions) (*policyv1.PodDisruptionBudgetList, error) {
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		return nil, p.refused("list with selectors")
	}
	if _, ok := p.s.kinds[pdbGVK.GroupKind()]; !ok {
		// A server without budgets: the REST finds none.
		return &policyv1.PodDisruptionBudgetList{}, nil
	}
	items, rv, err := p.s.List(pdbGVK, p.ns, ListOptions{})
	if err != nil {
		return nil, err
	}
	out := &policyv1.PodDisruptionBudgetList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, u := range items {
		pdb, err := p.typed(u)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *pdb)
	}
	return out, nil
}

func (p pdbs) UpdateStatus(_ context.Context, pdb *policyv1.PodDisruptionBudget, opts metav1.UpdateOptions) (*policyv1.PodDisruptionBudget, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pdb)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(pdbGVK)
	manager := opts.FieldManager
	if manager == "" {
		manager = loopbackManager
	}
	out, err := p.s.Update(Request{GVK: pdbGVK, Namespace: p.ns, Name: pdb.Name, Subresource: "status", FieldManager: manager, DryRun: len(opts.DryRun) > 0}, u)
	if err != nil {
		return nil, err
	}
	return p.typed(out)
}

func (p pdbs) refused(call string) error {
	return fmt.Errorf("apiserver: the eviction REST's PodDisruptionBudget client serves Get, List and UpdateStatus; it was asked for %s", call)
}

func (p pdbs) Create(context.Context, *policyv1.PodDisruptionBudget, metav1.CreateOptions) (*policyv1.PodDisruptionBudget, error) {
	return nil, p.refused("Create")
}

func (p pdbs) Update(context.Context, *policyv1.PodDisruptionBudget, metav1.UpdateOptions) (*policyv1.PodDisruptionBudget, error) {
	return nil, p.refused("Update")
}

func (p pdbs) Delete(context.Context, string, metav1.DeleteOptions) error {
	return p.refused("Delete")
}

func (p pdbs) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return p.refused("DeleteCollection")
}

func (p pdbs) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, p.refused("Watch")
}

func (p pdbs) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*policyv1.PodDisruptionBudget, error) {
	return nil, p.refused("Patch")
}

func (p pdbs) Apply(context.Context, *applypolicyv1.PodDisruptionBudgetApplyConfiguration, metav1.ApplyOptions) (*policyv1.PodDisruptionBudget, error) {
	return nil, p.refused("Apply")
}

func (p pdbs) ApplyStatus(context.Context, *applypolicyv1.PodDisruptionBudgetApplyConfiguration, metav1.ApplyOptions) (*policyv1.PodDisruptionBudget, error) {
	return nil, p.refused("ApplyStatus")
}
