package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// The errors below are the ones kube-apiserver answers with, built with
// apimachinery's constructors so that apierrors.IsConflict and friends,
// reasons, codes and messages match.

func (k *Kind) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.GVK.Group, Resource: k.Resource}
}

func notFoundResource(gvk schema.GroupVersionKind) error {
	// What the discovery-less REST path would answer for an unknown resource.
	return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, "")
}

func errNotFound(k *Kind, name string) error { return apierrors.NewNotFound(k.groupResource(), name) }

func errAlreadyExists(k *Kind, name string) error {
	return apierrors.NewAlreadyExists(k.groupResource(), name)
}

// errConflict is the storage layer's answer to a stale resourceVersion.
func errConflict(k *Kind, name string) error {
	return apierrors.NewConflict(k.groupResource(), name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

func errPrecondition(k *Kind, name, what, want, got string) error {
	return apierrors.NewConflict(k.groupResource(), name,
		//nolint:staticcheck // ST1005: kube-apiserver's own wording
		fmt.Errorf("Precondition failed: %s in precondition: %v, %s in object meta: %v", what, want, what, got))
}

// errDeletePrecondition is the storage layer's answer to a DELETE whose
// preconditions do not hold (k8s.io/apiserver's storage: the kind, not the
// resource, names the object).
func errDeletePrecondition(k *Kind, name, what, want, got string) error {
	how := "modified"
	if what == "UID" {
		how = "deleted and then recreated"
	}
	return apierrors.NewConflict(schema.GroupResource{Group: k.GVK.Group, Resource: k.GVK.Kind}, name,
		fmt.Errorf("the %s in the precondition (%s) does not match the %s in record (%s). The object might have been %s", what, want, what, got, how))
}

// errNoSubresource is the 404 of a subresource the kind does not have: the
// generic "no such path" for built-ins, the object's NotFound for custom
// resources (the CR handler answers it).
func errNoSubresource(k *Kind, name string) error {
	if k.CRD {
		return errNotFound(k, name)
	}
	return errNoResource()
}

// errNoResource is the 404 of a path the server does not serve.
func errNoResource() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}
}

// errPatchMediaType is the patch handler's 415 for a patch type the
// resource does not accept (negotiation.NewUnsupportedMediaTypeError).
func errPatchMediaType(accepted ...string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", ")}}
}

// errInvalidCR is an Invalid error of a custom resource as the CR handler
// names it (by its plural resource, as "widgets.example.com").
func errInvalidCR(k *Kind, name string, errs ...*field.Error) error {
	if !k.CRD {
		return errInvalid(k, name, errs...)
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: k.GVK.Group, Kind: k.Resource}, name, errs)
}

func errInvalid(k *Kind, name string, errs ...*field.Error) error {
	return apierrors.NewInvalid(k.GVK.GroupKind(), name, errs)
}

func errUnsupportedMediaType(k *Kind, name, msg string) error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", k.groupResource(), name, msg, 0, false)
}

// apiError turns an error that is not an API status into the status
// kube-apiserver's handlers answer with (responsewriters.ErrorToAPIStatus:
// 500, no reason, the error's text), e.g. a field manager's refusal of an
// apply configuration with duplicate list-map keys.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: *responsewriters.ErrorToAPIStatus(err)}
}
