package ctrlsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// viaFront serves a seam request through the server's handler front
// (apiserver.Server.FrontReads: kube-apiserver's own endpoint handlers
// over kube's REST storage) when the front serves it: a get of a main
// resource or its status, or a list, of a kind whose writes kube's REST
// storage makes. ok is false for every other request, which the seam's own
// path serves.
//
// The request is one call of the seam's live client (Client.call), as on
// the seam's own path: gated, perturbed (an error BeforeCall injects is
// answered as the handlers answer an error: a Status with its code) and
// recorded, with the object's resourceVersion a get read and the items a
// list returned. The response is the handlers' own: status code, headers
// (content type, Warning) and body, in the media type the client asked for
// (JSON, YAML, protobuf; PartialObjectMetadata and Table conversions).
func (t *restTransport) viaFront(req *http.Request, ri *genericrequest.RequestInfo) (*http.Response, bool) {
	switch {
	case ri.Verb == "get" && (ri.Subresource == "" || ri.Subresource == "status"):
	case ri.Verb == "list" && ri.Subresource == "":
	default:
		return nil, false
	}
	env := t.c.env
	gvr := schema.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource}
	env.Lock()
	gvk, err := env.Server.RESTMapper().KindFor(gvr)
	served := err == nil && env.Server.FrontServes(gvk)
	env.Unlock()
	if !served {
		return nil, false
	}
	op := &Op{Verb: verb.Get, Subresource: ri.Subresource, GVK: gvk, Namespace: ri.Namespace, Name: ri.Name}
	if ri.Verb == "list" {
		op = &Op{Verb: verb.List, GVK: gvk, Namespace: ri.Namespace}
	}
	ctx := viaSeam(req.Context())
	var rec *httptest.ResponseRecorder
	err = t.c.call(ctx, op, func() error {
		h, ok, err := env.Server.FrontReads(gvk)
		if err != nil {
			return err
		}
		if !ok {
			// The kind changed between the check and the call (its CRD
			// went): answered as for a kind not served.
			return apierrors.NewNotFound(gvr.GroupResource(), ri.Name)
		}
		var rr apiserver.ReadResult
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(apiserver.WithReadResult(ctx, &rr)))
		if op.Verb == verb.Get {
			op.ObservedRV = rr.RV
		} else {
			op.Items = rr.Items
		}
		return frontErr(rec)
	})
	if rec == nil {
		// Refused before the handlers ran (a perturbation, or the front
		// could not be built): answered as the seam answers an error
		// (a Status, with Retry-After when it says to retry).
		if err == nil {
			err = fmt.Errorf("the handler front did not run")
		}
		body, status := errStatus(err)
		resp, rerr := respond(req, body, status, nil)
		if rerr != nil {
			body, status = errStatus(rerr)
			resp, _ = respond(req, body, status, nil)
		}
		return resp, true
	}
	resp := rec.Result()
	resp.Request = req
	return resp, true
}

// frontErr is the error a front response carries (nil for a success): the
// Status its body holds, as client-go reads it.
func frontErr(rec *httptest.ResponseRecorder) error {
	if rec.Code < http.StatusBadRequest {
		return nil
	}
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(rec.Body.Bytes(), nil, nil)
	if st, ok := obj.(*metav1.Status); ok && err == nil {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return apierrors.NewGenericServerResponse(rec.Code, "", schema.GroupResource{}, "", rec.Body.String(), 0, false)
}
