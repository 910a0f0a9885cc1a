package apiserver

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Create implements rest.Creater for kube's create handler
// (CreateResource), which has decoded the body into the kind's internal
// version, or for a custom resource as the CRD handler decodes it
// (front_crbody.go) (content type, the fieldValidation directive's strict
// decoding and its warnings, defaults), decoded and validated the options, wiped
// the system fields, matched the object's namespace with the request's,
// deduplicated owner references and recorded the write in managed fields
// with its own field manager (the manager is the request's fieldManager,
// else its User-Agent's prefix). Below it is the engine's create
// (frontCreate): namespace admission, a generated name, the uid and
// creation time, kube's REST storage for the kind, and the engine's record
// of the write.
func (f *frontList) Create(ctx context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	w := frontWrite(ctx)
	if w == nil {
		return nil, apierrors.NewMethodNotSupported(f.k.groupResource(), "create")
	}
	u, err := f.s.fromFront(f.k, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := f.s.frontCreate(f.request(ctx, w, "", opts.FieldManager, opts.DryRun), u)
	if err != nil {
		return nil, err
	}
	w.Name, w.RV = out.GetName(), out.GetResourceVersion()
	return f.s.frontObject(f.k, out)
}

// frontCreate is Create below kube's create handler: the engine's create
// without what the handler has done (the body's strict decoding, managed
// fields), recorded as Create records.
func (s *Server) frontCreate(req Request, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	// The handler's field manager drew from math/rand's global source, as
	// the engine's does for a create (trackUpdate): counted, so that a
	// clone draws as often.
	s.randDraws++
	out, err := s.create(k, req, obj, false)
	return out, s.report(k, Write{Verb: verb.Create, Key: storeKey(k, req.Namespace, nameOf(out, obj)), Manager: req.FieldManager}, out, err)
}

// fromFront is what the engine's writes take of an object kube's handlers
// give the front's storage: a built-in kind's served version (from its
// internal one), a custom resource as it is (a copy).
func (s *Server) fromFront(k *Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	if !k.CRD {
		return s.fromInternal(k, obj)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("apiserver: kube's %s handler gave a %T", k.groupResource(), obj)
	}
	return u.DeepCopy(), nil
}

// request is the engine's Request for a write w through the front on the
// object name (empty for a create): the request's namespace for a
// namespaced kind, the storage's subresource, the request's field manager
// or else the writer's (an apply has none: kube's handler refused it
// before), its dry run, and warnings added to the handler's response.
func (f *frontStorage) request(ctx context.Context, w *FrontWrite, name, fieldManager string, dryRun []string) Request {
	ns := ""
	if f.k.Namespaced {
		ns, _ = genericrequest.NamespaceFrom(ctx)
	}
	if fieldManager == "" && w.Verb != verb.Apply {
		fieldManager = w.Manager
	}
	return Request{GVK: w.GVK, Namespace: ns, Name: name, Subresource: f.sub, FieldManager: fieldManager, DryRun: len(dryRun) > 0,
		Warn: func(text string) { warning.AddWarning(ctx, "", text) }}
}
