package apiserver

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/ctrlbugs/corpus/engine/store"
)

// The CRD lifecycle: what kube-apiserver's apiextensions controllers do
// after a CustomResourceDefinition is written, within milliseconds of it
// (pkg/controller/establish, pkg/controller/status naming controller,
// pkg/controller/finalizer in k8s.io/apiextensions-apiserver).
const (
	// CRDManager is the field manager of the server's own CRD writes.
	CRDManager = "apiextensions-apiserver"
	// CRDCleanupFinalizer holds a deleted CRD until its objects are gone
	// (added by the CRD storage's Delete, as the real server does).
	CRDCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
)

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// crdStrategy is the CustomResourceDefinition registry's, as far as the
// engine runs it (apiextensions-apiserver pkg/registry/customresourcedefinition):
// object-meta validation with apimachinery's rules, which is how its own
// cleanup finalizer passes; the registry's strategy, whose prepared object
// is what is stored and whose validation refuses (prepareCRD); its
// storage's Delete adds that finalizer; and, as an after-write hook, what
// the apiextensions controllers do after a write (followCRD).
type crdStrategy struct{ genericStrategy }

// beforeCreate: the CRD registry's strategy prepares and validates the
// create (prepareCRD).
func (crdStrategy) beforeCreate(_ *Server, _ *Kind, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	return prepareCRD(obj, nil, "")
}

// beforeUpdate: as beforeCreate, with the update's (or the status
// subresource's) strategy.
func (crdStrategy) beforeUpdate(_ *Server, _ *Kind, sub string, old, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	return prepareCRD(obj, old, sub)
}

// delete is apiextensions-apiserver's CRD storage's Delete
// (registryDelete: the cleanup finalizer and the Terminating condition on
// the first delete), else, under an ablation, the engine's with
// deleteFinalizers.
func (crdStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if s.throughRegistry(k) {
		return s.registryDelete(k, req, old, opts, nil)
	}
	return s.delete(k, req, old, opts)
}

// deleteFinalizers: the CRD storage's Delete holds the CRD until its
// objects are gone (the engine's path, under an ablation).
func (crdStrategy) deleteFinalizers(old *unstructured.Unstructured) []string {
	if old.GetDeletionTimestamp() != nil {
		return old.GetFinalizers()
	}
	return with(old.GetFinalizers(), CRDCleanupFinalizer)
}

// afterWrite: the apiextensions controllers act after a CRD write is
// stored.
func (crdStrategy) afterWrite(s *Server, w Write) {
	if w.Err == nil && len(w.Events) > 0 {
		s.followCRD(w.Events[len(w.Events)-1])
	}
}

// followCRD acts on a stored change of a CustomResourceDefinition, as the
// apiextensions controllers would right after it:
//   - created or updated: its kind is served (again) and, unless the status
//     already says so, a status write by CRDManager sets acceptedNames,
//     storedVersions and the NamesAccepted and Established conditions;
//   - deleted (deletionTimestamp with the cleanup finalizer): every object
//     of its kind is deleted; once none is left the finalizer is removed,
//     the CRD goes and its kind is no longer served.
//
// Each of these is a write of its own (its own revision and watch event),
// made at once rather than after the few milliseconds the real controllers
// take.
func (s *Server) followCRD(ev store.Event) {
	if ev.Type == store.Deleted {
		if crd, err := decodeCRD(ev.Prev); err == nil {
			delete(s.kinds, crdKind(crd))
		}
		return
	}
	crd, err := decodeCRD(ev.Object)
	if err != nil {
		return
	}
	if crd.DeletionTimestamp != nil {
		s.finalizeCRD(crd)
		return
	}
	want := crd.DeepCopy()
	names, accepted := s.crdNames(crd)
	want.Status.AcceptedNames = names
	for _, v := range crd.Spec.Versions {
		if v.Storage && !slices.Contains(want.Status.StoredVersions, v.Name) {
			want.Status.StoredVersions = append(want.Status.StoredVersions, v.Name)
		}
	}
	setCRDCondition(want, apiextensionsv1.NamesAccepted, accepted.Status, accepted.Reason, accepted.Message, s.metaNow())
	switch {
	case accepted.Status != apiextensionsv1.ConditionTrue:
		// Not served: the establishing controller waits for the names.
		// A CRD never established says so; one that was keeps its
		// condition (and its kind served under the names it had).
		if crdCondition(crd, apiextensionsv1.Established) == nil {
			setCRDCondition(want, apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "NotAccepted", "not all names are accepted", s.metaNow())
		}
	default:
		if installErr := s.InstallCRD(crd); installErr != nil {
			setCRDCondition(want, apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "Installing", installErr.Error(), s.metaNow())
		} else {
			setCRDCondition(want, apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted", s.metaNow())
		}
	}
	if equalCRDStatus(crd.Status, want.Status) {
		return
	}
	u, err := toUnstructuredCRD(want)
	if err != nil {
		return
	}
	_, _ = s.Update(Request{GVK: crdGVK, Name: crd.Name, Subresource: "status", FieldManager: CRDManager}, u)
}

// crObjectGone: an object of a custom resource kind k left the store; if
// k's CRD is terminating, the apiextensions finalizer controller finishes
// it once the kind's last object is gone. The real controller polls for
// that (pkg/controller/finalizer: every 5 s, then it requeues); here the
// CRD is looked at again as the object goes.
func (s *Server) crObjectGone(k *Kind) {
	crdK, ok := s.kinds[crdGVK.GroupKind()]
	if !ok || k.crd == nil {
		return
	}
	obj, _, ok := s.store.Peek(storeKey(crdK, "", k.crd.Name), 0)
	if !ok || obj.GetDeletionTimestamp() == nil {
		return
	}
	if crd, err := decodeCRD(obj); err == nil {
		s.finalizeCRD(crd)
	}
}

// crdNames is the naming controller's verdict on crd's names
// (apiextensions-apiserver pkg/controller/status/naming_controller.go,
// calculateNamesAndConditions and getAcceptedNamesForGroup: unexported
// methods over its informer's lister, restated over the store): each
// requested name that differs from the accepted one and is already
// accepted by a CRD of the same group (plural, singular and short names
// among resources; kind and listKind among kinds) is not accepted, and the
// NamesAccepted condition says which conflicted last (the controller's
// order); categories are always accepted.
func (s *Server) crdNames(crd *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition) {
	resources, kinds := sets.New[string](), sets.New[string]()
	for _, o := range s.store.List(crdGVK.GroupKind(), "", 0) {
		other, err := decodeCRD(o)
		if err != nil || other.Spec.Group != crd.Spec.Group {
			continue
		}
		an := other.Status.AcceptedNames
		resources.Insert(an.Plural, an.Singular)
		resources.Insert(an.ShortNames...)
		kinds.Insert(an.Kind, an.ListKind)
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	fresh := func(requested, accepted string, used sets.Set[string]) error {
		if requested == accepted || !used.Has(requested) {
			return nil
		}
		return fmt.Errorf("%q is already in use", requested)
	}
	req, acc := crd.Spec.Names, crd.Status.AcceptedNames
	out := acc
	// accept takes a requested name unless it conflicts, in the
	// controller's order (the last conflict names the reason).
	accept := func(reason, requested, accepted string, used sets.Set[string], dst *string) {
		if err := fresh(requested, accepted, used); err != nil {
			conflict(reason, err)
		} else {
			*dst = requested
		}
	}
	accept("PluralConflict", req.Plural, acc.Plural, resources, &out.Plural)
	accept("SingularConflict", req.Singular, acc.Singular, resources, &out.Singular)
	if !slices.Equal(req.ShortNames, acc.ShortNames) {
		var errs []error
		for _, n := range req.ShortNames {
			if slices.Contains(acc.ShortNames, n) {
				continue
			}
			if err := fresh(n, "", resources); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			out.ShortNames = req.ShortNames
		}
	}
	accept("KindConflict", req.Kind, acc.Kind, kinds, &out.Kind)
	accept("ListKindConflict", req.ListKind, acc.ListKind, kinds, &out.ListKind)
	out.Categories = req.Categories
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}
	return out, cond
}

// crdCondition is crd's condition of type t, or nil.
func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// finalizeCRD deletes a terminating CRD's objects and, once none is left,
// lets the CRD go. It does not run again for a CRD it is finalizing (the
// deletes it makes come back to it through crObjectGone).
func (s *Server) finalizeCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	if !slices.Contains(crd.Finalizers, CRDCleanupFinalizer) || s.finalizing[crd.Name] {
		return
	}
	if s.finalizing == nil {
		s.finalizing = map[string]bool{}
	}
	s.finalizing[crd.Name] = true
	defer delete(s.finalizing, crd.Name)
	gk := crdKind(crd)
	if k, ok := s.kinds[gk]; ok {
		for _, it := range s.store.List(gk, "", 0) {
			if it.GetDeletionTimestamp() != nil {
				continue
			}
			_, _ = s.Delete(Request{GVK: k.GVK, Namespace: it.GetNamespace(), Name: it.GetName(), FieldManager: CRDManager}, metav1.DeleteOptions{})
		}
		if len(s.store.List(gk, "", 0)) > 0 {
			// Objects with finalizers hold the CRD, as in a real cluster;
			// the next write of the CRD looks again.
			return
		}
	}
	want := crd.DeepCopy()
	want.Finalizers = without(want.Finalizers, CRDCleanupFinalizer)
	u, err := toUnstructuredCRD(want)
	if err != nil {
		return
	}
	_, _ = s.Update(Request{GVK: crdGVK, Name: crd.Name, FieldManager: CRDManager}, u)
}

func crdKind(crd *apiextensionsv1.CustomResourceDefinition) schema.GroupKind {
	return schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
}

func decodeCRD(u *unstructured.Unstructured) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if u == nil {
		return nil, fmt.Errorf("no object")
	}
	return crd, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)
}

func toUnstructuredCRD(crd *apiextensionsv1.CustomResourceDefinition) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(crdGVK)
	return u, nil
}

// setCRDCondition sets a condition, keeping its transition time when the
// status does not change (apiextensions' helpers.SetCRDCondition).
func setCRDCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType, st apiextensionsv1.ConditionStatus, reason, msg string, now metav1.Time) {
	for i, c := range crd.Status.Conditions {
		if c.Type != t {
			continue
		}
		if c.Status != st {
			crd.Status.Conditions[i].LastTransitionTime = now
		}
		crd.Status.Conditions[i].Status, crd.Status.Conditions[i].Reason, crd.Status.Conditions[i].Message = st, reason, msg
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{Type: t, Status: st, Reason: reason, Message: msg, LastTransitionTime: now})
}

func equalCRDStatus(a, b apiextensionsv1.CustomResourceDefinitionStatus) bool {
	ua, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(&a)
	ub, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(&b)
	return err1 == nil && err2 == nil && fmt.Sprint(ua) == fmt.Sprint(ub)
}
