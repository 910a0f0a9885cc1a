package scenario

// How a scenario names a kind (TypeRef: apiVersion and kind, as an object
// does) and the "group/version/Kind" notation of messages and of scenarios
// before schema v1.

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	kindRE       = regexp.MustCompile(`^(?:([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)/)?([a-z0-9]+)/([A-Z][A-Za-z0-9]*)$`)
	apiVersionRE = regexp.MustCompile(`^(?:([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)/)?([a-z0-9]+)$`)
	kindNameRE   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// TypeRef names a kind in a scenario as a Kubernetes object names its own:
// apiVersion ("group/version", or "v1" for the core group) and kind, two
// fields of the object that holds them (a staleness perturbation, an
// afterWrite trigger, an apiError's call, a write oracle's select):
//
//	{"type": "staleness", "controller": "bucket", "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", ...}
//
// Both are set or neither. Scenarios before schema v1 wrote one string,
// "source.toolkit.fluxcd.io/v1/Bucket" (ParseKind); v1 refuses it.
type TypeRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// HasKind reports whether the reference names a kind (either field set).
func (r TypeRef) HasKind() bool { return r.APIVersion != "" || r.Kind != "" }

// GVK returns the kind named; an error when a field is missing or
// malformed. Validate reports those errors against the fields.
func (r TypeRef) GVK() (schema.GroupVersionKind, error) {
	if r.APIVersion == "" || r.Kind == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("a kind needs both apiVersion and kind, got apiVersion %q and kind %q", r.APIVersion, r.Kind)
	}
	m := apiVersionRE.FindStringSubmatch(r.APIVersion)
	if m == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("bad apiVersion %q: want group/version, or version for the core group (e.g. \"apps/v1\", \"v1\")", r.APIVersion)
	}
	if !kindNameRE.MatchString(r.Kind) {
		return schema.GroupVersionKind{}, fmt.Errorf("bad kind %q: %s", r.Kind, kindNameMsg(r.Kind))
	}
	return schema.GroupVersionKind{Group: m[1], Version: m[2], Kind: r.Kind}, nil
}

// Problems says what is wrong with the form of r, the TypeRef of an
// object: each problem is the field ("apiVersion" or "kind") and its
// message; ok is false when r names no readable kind. A TypeRef with
// neither field set has none.
func (r TypeRef) Problems() (problems [][2]string, ok bool) {
	if !r.HasKind() {
		return nil, false
	}
	ok = true
	switch m := apiVersionRE.FindStringSubmatch(r.APIVersion); {
	case r.APIVersion == "":
		problems = append(problems, [2]string{"apiVersion", "required with kind: the kind's group/version, such as \"apps/v1\" (\"v1\" for the core group)"})
		ok = false
	case m == nil:
		problems = append(problems, [2]string{"apiVersion", fmt.Sprintf("bad apiVersion %q: want group/version, or version for the core group (e.g. \"apps/v1\", \"v1\")", r.APIVersion)})
		ok = false
	}
	switch {
	case r.Kind == "":
		problems = append(problems, [2]string{"kind", "required with apiVersion: the kind's name, such as \"Deployment\""})
		ok = false
	case !kindNameRE.MatchString(r.Kind):
		problems = append(problems, [2]string{"kind", kindNameMsg(r.Kind)})
		ok = false
	}
	return problems, ok
}

// RefOf is the TypeRef of gvk.
func RefOf(gvk schema.GroupVersionKind) TypeRef {
	return TypeRef{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
}

// kindNameMsg says what is wrong with a kind field that is not a kind's
// name; the pre-v1 single string gets its v1 spelling.
func kindNameMsg(k string) string {
	if gvk, err := ParseKind(k); err == nil {
		return fmt.Sprintf("%q is the single-string spelling of scenarios before schema v1; v1 writes %s (make migrate-scenarios rewrites it)", k, FormatRef(gvk))
	}
	if strings.Contains(k, "/") {
		return fmt.Sprintf("%q: v1 writes a kind as two fields, \"apiVersion\": \"<group>/<version>\" (\"v1\" for the core group) and \"kind\": \"<Kind>\", e.g. \"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\"", k)
	}
	return "want a kind's name, such as \"Deployment\", beside its apiVersion"
}

// FormatRef is gvk as a scenario writes it: "apiVersion": "g/v", "kind": "K".
func FormatRef(gvk schema.GroupVersionKind) string {
	return fmt.Sprintf("\"apiVersion\": %q, \"kind\": %q", gvk.GroupVersion().String(), gvk.Kind)
}

// ParseKind parses "group/version/Kind", or "version/Kind" for the core
// group (as in "v1/ConfigMap" or "source.toolkit.fluxcd.io/v1/Bucket"): the
// notation of messages, and of scenario files before schema v1 (Migrate).
func ParseKind(s string) (schema.GroupVersionKind, error) {
	m := kindRE.FindStringSubmatch(s)
	if m == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("bad kind %q: want group/version/Kind, or version/Kind for the core group (e.g. \"apps/v1/Deployment\", \"v1/ConfigMap\")", s)
	}
	return schema.GroupVersionKind{Group: m[1], Version: m[2], Kind: m[3]}, nil
}

// FormatKind is the inverse of ParseKind.
func FormatKind(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// defineKinds adds to the known kinds those the scenario's objects and
// created or updated action objects define (see Known.Defines).
