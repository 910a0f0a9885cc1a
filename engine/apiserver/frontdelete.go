package apiserver

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// FrontWrite is what a write through the front needs of its caller, and
// what it gives back for the caller's record. Only a request whose context
// carries one (WithFrontWrite) may write: make inspect's never does.
type FrontWrite struct {
	// GVK is the kind as the request named it.
	GVK schema.GroupVersionKind
	// Manager is the writer's name, the field manager of a write whose
	// request names none (as Request.FieldManager).
	Manager string
	// Verb is an update's or a patch's as the engine records it: update,
	// patch or apply.
	Verb verb.Verb
	// Name is set by a create: the object's name (a generated one too).
	Name string
	// RV is the object's resourceVersion after the write: a create's, or
	// a delete's (the deletion's, or the update that marked it for
	// deletion).
	RV string
}

type frontWriteKey struct{}

// WithFrontWrite returns a context whose write through the front is made
// for w's caller and reported in w.
func WithFrontWrite(ctx context.Context, w *FrontWrite) context.Context {
	return context.WithValue(ctx, frontWriteKey{}, w)
}

func frontWrite(ctx context.Context) *FrontWrite {
	w, _ := ctx.Value(frontWriteKey{}).(*FrontWrite)
	return w
}

// Delete implements rest.GracefulDeleter for kube's delete handler
// (DeleteResource), which has decoded, defaulted and validated the
// options: the engine's delete (Server.Delete: the kind's storage below
// it, and the engine's record of the write), answered as kube's registry
// Store answers (store.go Delete and finalizeDelete): an object that
// finalizers or a grace period still hold is returned with false; one
// gone, with true, as itself where kube's storage returns deleted objects
// and otherwise as a Success Status naming it (name, group, resource as
// kind, uid).
func (f *frontList) Delete(ctx context.Context, name string, _ rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	w := frontWrite(ctx)
	if w == nil {
		return nil, false, apierrors.NewMethodNotSupported(f.k.groupResource(), "delete")
	}
	ns, _ := genericrequest.NamespaceFrom(ctx)
	return f.delete(w, ns, name, opts)
}

func (f *frontList) delete(w *FrontWrite, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, err := f.s.Delete(Request{GVK: w.GVK, Namespace: ns, Name: name, FieldManager: w.Manager, DryRun: len(opts.DryRun) > 0}, *opts)
	if err != nil {
		return nil, false, err
	}
	w.RV = out.GetResourceVersion()
	obj, err := f.s.frontObject(f.k, out)
	if err != nil {
		return nil, false, err
	}
	if held(out) {
		return obj, false, nil
	}
	if f.returnDeleted {
		return obj, true, nil
	}
	gr := f.k.groupResource()
	return &metav1.Status{Status: metav1.StatusSuccess, Details: &metav1.StatusDetails{
		Name: out.GetName(), Group: gr.Group, Kind: gr.Resource, UID: out.GetUID()}}, true, nil
}

// held reports whether a deleted object is still stored: marked for
// deletion and held by finalizers or a grace period.
func held(u *unstructured.Unstructured) bool {
	if u.GetDeletionTimestamp() == nil {
		return false
	}
	gp := u.GetDeletionGracePeriodSeconds()
	return len(u.GetFinalizers()) > 0 || (gp != nil && *gp > 0)
}

// deleteCollectionPageSize is kube's registry Store's page when it lists
// what a deletecollection deletes (store.go deleteCollectionPageSize).
const deleteCollectionPageSize = 10000

// DeleteCollection implements rest.CollectionDeleter for kube's
// deletecollection handler: kube's registry Store.DeleteCollection,
// restated over the engine's delete (it calls the Store's own Delete,
// which would skip the engine's record): the kind's storage lists a page
// at a time (limit 10000 unless the request set one; with a limit, that
// page only), each item is deleted in the list's order (kube's one
// deletecollection worker), an object already gone is skipped, and the
// answer is the list of the objects as listed.
func (f *frontList) DeleteCollection(ctx context.Context, _ rest.ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *metainternalversion.ListOptions) (runtime.Object, error) {
	w := frontWrite(ctx)
	if w == nil {
		return nil, apierrors.NewMethodNotSupported(f.k.groupResource(), "deletecollection")
	}
	lo := &metainternalversion.ListOptions{}
	if listOpts != nil {
		lo = listOpts.DeepCopy()
	}
	hasLimit := lo.Limit > 0
	if lo.Limit == 0 {
		lo.Limit = deleteCollectionPageSize
	}
	var items []runtime.Object
	var first runtime.Object
	for {
		l, err := f.list.List(ctx, lo)
		if err != nil {
			return nil, err
		}
		page, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range page {
			m, err := meta.Accessor(it)
			if err != nil {
				return nil, err
			}
			if _, _, err := f.delete(w, m.GetNamespace(), m.GetName(), opts.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
		items = append(items, page...)
		if hasLimit {
			return l, nil
		}
		if first == nil {
			first = l
			if err := meta.SetList(first, nil); err != nil {
				return nil, err
			}
		}
		m, err := meta.ListAccessor(l)
		if err != nil {
			return nil, err
		}
		if m.GetContinue() == "" {
			return first, meta.SetList(first, items)
		}
		lo.Continue, lo.ResourceVersion, lo.ResourceVersionMatch = m.GetContinue(), "", ""
	}
}
