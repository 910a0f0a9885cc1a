package apiserver

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Update implements rest.Updater for kube's update (UpdateResource) and
// patch (PatchResource) handlers, on a main resource and on its status.
// The handlers have decoded the body or the patch and the options, and
// give objInfo, which makes the new object from the stored one as kube's
// registry Store asks it to inside its GuaranteedUpdate: the update
// handler's body, or the patch handler's patch applied to the stored
// object (merge, JSON, strategic merge, or server-side apply with its
// conflicts), then their field manager's record in managed fields (the
// request's fieldManager, else the User-Agent's prefix). Below it is the
// engine's update (frontUpdate): the object's preconditions, the kind's
// strategy through kube's REST storage, and the engine's record of the
// write (FrontWrite.Verb: update, patch or apply).
func (f *frontStorage) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, _ rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	w := frontWrite(ctx)
	if w == nil {
		return nil, false, apierrors.NewMethodNotSupported(f.k.groupResource(), "update")
	}
	req := f.request(ctx, w, name, opts.FieldManager, opts.DryRun)
	updated := func(old *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live := f.new()
		if old != nil {
			var err error
			if live, err = f.s.frontObject(f.k, old); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		obj, err := objInfo.UpdatedObject(ctx, live)
		if err != nil {
			return nil, err
		}
		u, err := f.s.fromFront(f.k, obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return u, nil
	}
	out, created, err := f.s.frontUpdate(req, w.Verb, forceAllowCreate, updated)
	if err != nil {
		return nil, false, err
	}
	w.RV = out.GetResourceVersion()
	obj, err := f.s.frontObject(f.k, out)
	return obj, created, err
}

// GetResetFields implements rest.ResetFieldsStrategy with the kind's
// storage's, which the installer gives the handlers' field manager (the
// fields a write of the resource or of its status does not own).
func (f *frontStorage) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return f.reset
}

// frontUpdate is Update and Patch below kube's update and patch handlers:
// the engine's update of the stored object with the object updated makes
// of it (nil when there is none), or, where the kind's strategy lets an
// update create (or the handler forces it: an apply), its create; recorded
// as the engine records v. created says the object was created.
func (s *Server) frontUpdate(req Request, v verb.Verb, forceAllowCreate bool, updated func(old *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, bool, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, false, err
	}
	key := storeKey(k, req.Namespace, req.Name)
	old, ok := s.store.Get(key, 0)
	var in, out *unstructured.Unstructured
	created := false
	switch {
	case ok:
		if in, err = updated(old); err == nil {
			out, err = s.update(k, req, old, in, false, v)
		}
	case req.Subresource == "" && (forceAllowCreate || k.strategy.allowCreateOnUpdate(k, req.Namespace)):
		if v != verb.Apply {
			// The handler's field manager draws from math/rand's global
			// source for an update that creates, as for a create
			// (trackUpdate); an apply's does not.
			s.randDraws++
		}
		if in, err = updated(nil); err == nil {
			// As kube's Store creates on update: the name and namespace
			// the request's, no resourceVersion precondition.
			in.SetName(req.Name)
			in.SetNamespace(req.Namespace)
			in.SetResourceVersion("")
			out, err = s.create(k, req, in, false)
			created = err == nil
		}
	default:
		err = errNotFound(k, req.Name)
	}
	return out, created, s.report(k, Write{Verb: v, Subresource: req.Subresource, Key: key, Manager: req.FieldManager, RVBefore: rvOf(old)}, out, err)
}
