package apiserver

import (
	"fmt"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListQuery decodes and validates a list's (or a watch's, or a
// deletecollection's) query parameters as kube-apiserver's list handler
// does (listOpts in k8s.io/apiserver/pkg/endpoints/handlers/get.go): the
// meta internal version's ParameterCodec, which parses the selectors (400
// on a bad one), then SetListOptionsDefaults and ValidateListOptions with
// WatchList enabled, as it is by default since 1.34 (422 on the
// ListOptions kind). Empty selectors come back nil. The REST seam and
// make inspect both read a request's options with it, so they answer the
// same request alike (inspect's TestSeamInspectAgree).
func ListQuery(q url.Values) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := metainternalversionvalidation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.LabelSelector != nil && opts.LabelSelector.Empty() {
		opts.LabelSelector = nil
	}
	if opts.FieldSelector != nil && opts.FieldSelector.Empty() {
		opts.FieldSelector = nil
	}
	return opts, nil
}

// TooOldToWatch returns the status a watch of gk from revision from ends
// with at once, or nil: kube-apiserver's watch cache for a kind starts
// where the kind began to be served, so a watch from before that gets its
// error watcher (a 200 stream with one ERROR event, 410 Expired). The
// store keeps its whole history, so no other revision is too old.
func (s *Server) TooOldToWatch(gk schema.GroupKind, from int64) *metav1.Status {
	k, ok := s.KindFor(gk)
	if !ok || from <= 0 || from >= k.ServedSince {
		return nil
	}
	st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, k.ServedSince)).Status()
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	return &st
}
