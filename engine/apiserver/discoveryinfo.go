package apiserver

import "k8s.io/apimachinery/pkg/runtime/schema"

// Subresource is one subresource a kind serves, as discovery lists it.
type Subresource struct {
	Name  string
	Kind  schema.GroupVersionKind // the kind its requests and responses carry
	Verbs []string
}

// Subresources lists the subresources the engine serves for k: status,
// scale (autoscaling/v1 Scale), a Pod's binding (core/v1 Binding, verbs
// [create], as kube-apiserver's discovery lists pods/binding) and eviction
// (policy/v1 Eviction) and a Namespace's finalize, in kube-apiserver's
// discovery order. Other subresources of built-in kinds (a Pod's log, exec,
// …) are not served.
func (k *Kind) Subresources() []Subresource {
	var out []Subresource
	if k.GVK.Group == "" && k.GVK.Kind == "Pod" {
		out = append(out, Subresource{Name: "binding", Kind: k.GVK.GroupVersion().WithKind("Binding"), Verbs: []string{"create"}})
	}
	if k.GVK.Group == "" && k.GVK.Kind == "Namespace" {
		out = append(out, Subresource{Name: "finalize", Kind: k.GVK, Verbs: []string{"update"}})
	}
	if _, _, _, ok := scalePaths(k); ok {
		out = append(out, Subresource{Name: "scale", Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: []string{"get", "patch", "update"}})
	}
	if k.Status {
		out = append(out, Subresource{Name: "status", Kind: k.GVK, Verbs: []string{"get", "patch", "update"}})
	}
	if k.GVK.Group == "" && k.GVK.Kind == "Pod" {
		out = append(out, Subresource{Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}})
	}
	return out
}

// Verbs lists the verbs discovery gives k's main resource.
func (k *Kind) Verbs() []string {
	if k.GVK.Group == "" && k.GVK.Kind == "Namespace" {
		// kube-apiserver's namespace storage has no DeleteCollection.
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}
