package apiserver

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
		fmt.Errorf("Precondition failed: %s in precondition: %v, %s in object meta: %v", what, want, what, got))
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
