package apiserver

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
)

// Namespaces: the NamespaceLifecycle admission plugin's checks
// (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle, restated: the
// plugin reads namespaces from an informer), and, for a server under an
// ablation only, the namespace registry's rules restated
// (namespaceStrategy; otherwise kube's namespace REST storage writes them:
// registrystorage.go).

var namespaceGK = schema.GroupKind{Kind: "Namespace"}

// immortalNamespaces cannot be deleted (kube-apiserver configures the
// NamespaceLifecycle plugin with default, kube-system and kube-public).
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

func specFinalizers(u *unstructured.Unstructured) []string {
	f, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "finalizers")
	return f
}

func setSpecFinalizers(u *unstructured.Unstructured, f []string) {
	if len(f) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "finalizers")
		if spec, ok := u.Object["spec"].(map[string]any); ok && len(spec) == 0 {
			delete(u.Object, "spec")
		}
		return
	}
	_ = unstructured.SetNestedStringSlice(u.Object, f, "spec", "finalizers")
}

func namespacePhase(u *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return p
}

// canonicalizeNamespace is the namespace strategy's Canonicalize: the
// kubernetes.io/metadata.name label is always the name.
func canonicalizeNamespace(u *unstructured.Unstructured) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	if l[corev1.LabelMetadataName] != u.GetName() {
		l[corev1.LabelMetadataName] = u.GetName()
		u.SetLabels(l)
	}
}

// namespaceStrategy is the namespace registry's strategies (restated, used
// under an ablation: otherwise kube's own run in its REST storage) for
// the write path: the main resource's, the status subresource's (the
// common status rules) and the finalize subresource's.
type namespaceStrategy struct{ genericStrategy }

// beforeCreate is the namespace strategy's PrepareForCreate (status
// Active, the "kubernetes" finalizer in spec.finalizers) and Canonicalize.
func (namespaceStrategy) beforeCreate(_ *Server, _ *Kind, u *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	u.Object["status"] = map[string]any{"phase": string(corev1.NamespaceActive)}
	f := specFinalizers(u)
	if !slices.Contains(f, string(corev1.FinalizerKubernetes)) {
		setSpecFinalizers(u, append(f, string(corev1.FinalizerKubernetes)))
	}
	canonicalizeNamespace(u)
	return u, nil
}

// prepareForUpdate is PrepareForUpdate of the namespace strategy (main
// resource: spec.finalizers and status from the old object) and of the
// finalize strategy (status from the old object), then Canonicalize. The
// status subresource is handled by the common path.
func (namespaceStrategy) prepareForUpdate(_ *Server, _ *Kind, sub string, old, obj *unstructured.Unstructured) {
	switch sub {
	case "":
		setSpecFinalizers(obj, specFinalizers(old))
		fallthrough
	case "finalize":
		if st, ok := old.Object["status"]; ok {
			obj.Object["status"] = st
		} else {
			delete(obj.Object, "status")
		}
	}
	canonicalizeNamespace(obj)
}

// shouldDeleteDuringUpdate is the namespace registry's
// ShouldDeleteNamespaceDuringUpdate: a namespace also needs an empty
// spec.finalizers.
func (n namespaceStrategy) shouldDeleteDuringUpdate(old, obj *unstructured.Unstructured) bool {
	return n.genericStrategy.shouldDeleteDuringUpdate(old, obj) && len(specFinalizers(obj)) == 0
}

// subresources: the finalize subresource writes spec.finalizers.
func (namespaceStrategy) subresources() []string { return []string{"finalize"} }

// admitNamespace is the NamespaceLifecycle admission plugin's check of a
// create of a namespaced object: the namespace must exist (404) and must not
// be Terminating (403 with a NamespaceTerminating cause). The error is built
// with the admission package's constructor, as the plugin builds it.
func (s *Server) admitNamespace(k *Kind, obj *unstructured.Unstructured, ns string, dryRun bool) error {
	nsObj, ok := s.store.Get(storeKey(s.kinds[namespaceGK], "", ns), 0)
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
	}
	if namespacePhase(nsObj) != string(corev1.NamespaceTerminating) {
		return nil
	}
	a := admission.NewAttributesRecord(obj, nil, k.GVK, ns, obj.GetName(), k.GVK.GroupVersion().WithResource(k.Resource), "", admission.Create, nil, dryRun, nil)
	err := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	if apierr, ok := err.(*apierrors.StatusError); ok {
		apierr.ErrStatus.Details.Causes = append(apierr.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", ns),
			Field:   "metadata.namespace",
		})
	}
	return err
}

// delete is kube's namespace REST storage's Delete (registryDelete), with
// the NamespaceLifecycle plugin's refusal of an immortal namespace as its
// admission; under an ablation, the restatement (deleteNamespace).
func (namespaceStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if s.throughRegistry(k) {
		return s.registryDelete(k, req, old, opts, func(context.Context, runtime.Object) error {
			return admitNamespaceDelete(k, old.GetName())
		})
	}
	return s.deleteNamespace(k, req, old, opts)
}

// admitNamespaceDelete is the NamespaceLifecycle admission plugin's
// refusal to delete an immortal namespace (403).
func admitNamespaceDelete(k *Kind, name string) error {
	if slices.Contains(immortalNamespaces, name) {
		return apierrors.NewForbidden(k.groupResource(), name, fmt.Errorf("this namespace may not be deleted"))
	}
	return nil
}

// deleteNamespace is the namespace registry's Delete: the first delete sets
// deletionTimestamp and phase Terminating (and the orphan / foregroundDeletion
// finalizers the options ask for) and keeps the namespace, whatever its
// spec.finalizers; later deletes leave it alone while spec.finalizers is not
// empty, and delete it as any object once it is. Immortal namespaces are
// refused (NamespaceLifecycle).
func (s *Server) deleteNamespace(k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if err := admitNamespaceDelete(k, old.GetName()); err != nil {
		return nil, err
	}
	if err := s.checkDeletePreconditions(k, old, opts); err != nil {
		return nil, err
	}
	if old.GetDeletionTimestamp() == nil {
		obj := old.DeepCopy()
		now := s.metaNow()
		obj.SetDeletionTimestamp(&now)
		_ = unstructured.SetNestedField(obj.Object, string(corev1.NamespaceTerminating), "status", "phase")
		f := obj.GetFinalizers()
		orphan := slices.Contains(f, metav1.FinalizerOrphanDependents)
		foreground := slices.Contains(f, metav1.FinalizerDeleteDependents)
		switch {
		case opts.OrphanDependents != nil: //nolint:staticcheck // deprecated, still honoured by kube-apiserver
			orphan, foreground = *opts.OrphanDependents, !*opts.OrphanDependents //nolint:staticcheck // as above
		case opts.PropagationPolicy != nil:
			orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
			foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
		}
		f = without(without(f, metav1.FinalizerOrphanDependents), metav1.FinalizerDeleteDependents)
		if orphan {
			f = append(f, metav1.FinalizerOrphanDependents)
		}
		if foreground {
			f = append(f, metav1.FinalizerDeleteDependents)
		}
		obj.SetFinalizers(f)
		if req.DryRun {
			return obj, nil
		}
		key := storeKey(k, "", old.GetName())
		return s.store.Put(key, obj, s.store.CurrentRev(key))
	}
	if len(specFinalizers(old)) != 0 {
		return old, nil
	}
	return s.delete(k, req, old, opts)
}
