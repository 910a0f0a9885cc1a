package ctrlsim

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Status implements client.StatusClient.
func (c *Client) Status() client.SubResourceWriter { return &subResourceClient{c: c, sub: "status"} }

// SubResource implements client.SubResourceClientConstructor.
func (c *Client) SubResource(sub string) client.SubResourceClient {
	return &subResourceClient{c: c, sub: sub}
}

type subResourceClient struct {
	c   *Client
	sub string
}

var _ client.SubResourceClient = (*subResourceClient)(nil)

func (s *subResourceClient) Get(ctx context.Context, obj client.Object, subResource client.Object, opts ...client.SubResourceGetOption) error {
	if s.sub != "scale" {
		return apierrors.NewBadRequest("ctrlsim: only the scale subresource can be read")
	}
	gvk, err := s.c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.Get, Subresource: s.sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return s.c.call(ctx, op, func() error {
		scale, err := s.c.env.Server.GetScale(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		if err != nil {
			return err
		}
		return decodeInto(scale, subResource)
	})
}

// Create implements client.SubResourceWriter: the eviction (a policy/v1
// Eviction) and binding (a core/v1 Binding) subresources of pods; others
// are refused. As controller-runtime's client does, a subResource without a
// name gets obj's (so its name never mismatches the URL's).
func (s *subResourceClient) Create(ctx context.Context, obj client.Object, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	if subResource.GetName() == "" && subResourceKinds[s.sub] != (schema.GroupVersionKind{}) {
		subResource.SetName(obj.GetName())
	}
	co := (&client.SubResourceCreateOptions{}).ApplyOptions(opts)
	out, err := s.c.createSubResource(ctx, obj, s.sub, subResource, &co.CreateOptions)
	if err != nil {
		return err
	}
	// controller-runtime decodes the answer (a Status) into subResource:
	// its typed client zeroes the target first (apiutil's
	// targetZeroingDecoder) and the Status does not decode into it; its
	// unstructured client leaves the Status there.
	if u, ok := subResource.(*unstructured.Unstructured); ok {
		if out != nil {
			u.Object = out.DeepCopy().Object
		}
	} else if v := reflect.ValueOf(subResource); v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().Set(reflect.Zero(v.Elem().Type()))
	}
	return nil
}

// subResourceKinds are the kinds of the subresources Create serves.
var subResourceKinds = map[string]schema.GroupVersionKind{
	"eviction": policyv1.SchemeGroupVersion.WithKind("Eviction"),
	"binding":  corev1.SchemeGroupVersion.WithKind("Binding"),
}

// createSubResource posts body to obj's subresource sub, recorded as a
// create of the subresource (the REST seam calls it with the request body
// as it came, unnamed or not). The call's precondition is a binding's
// resourceVersion, which the server checks.
func (c *Client) createSubResource(ctx context.Context, obj client.Object, sub string, body runtime.Object, co *client.CreateOptions) (*unstructured.Unstructured, error) {
	kind, ok := subResourceKinds[sub]
	if !ok {
		if sub != "status" && sub != "scale" {
			return nil, apiserver.ErrNoRoute(schema.GroupResource{Resource: sub}, obj.GetName())
		}
		return nil, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: sub}, "create")
	}
	gvk, err := c.gvk(obj)
	if err != nil {
		return nil, err
	}
	op := &Op{Verb: verb.Create, Subresource: sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if m, ok := body.(metav1.Object); ok && sub == "binding" {
		op.Precondition = m.GetResourceVersion()
	}
	var out *unstructured.Unstructured
	err = c.call(ctx, op, func() error {
		u, err := c.toUnstructured(body, kind)
		if err != nil {
			return err
		}
		out, err = c.env.Server.Create(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: sub, FieldManager: c.manager(co.FieldManager), DryRun: len(co.DryRun) > 0}, u)
		if err == nil && sub == "binding" {
			// The answer is a Status: the bound pod's resourceVersion.
			op.RVAfter = c.currentRV(gvk, obj.GetNamespace(), obj.GetName())
		}
		return err
	})
	return out, err
}

func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	if s.sub == "scale" {
		return s.updateScale(ctx, obj, uo)
	}
	return s.c.update(ctx, obj, s.sub, &uo.UpdateOptions)
}

func (s *subResourceClient) updateScale(ctx context.Context, obj client.Object, uo *client.SubResourceUpdateOptions) error {
	gvk, err := s.c.gvk(obj)
	if err != nil {
		return err
	}
	body := uo.SubResourceBody
	if body == nil {
		return apierrors.NewBadRequest("ctrlsim: scale update needs a SubResourceBody (an autoscaling/v1 Scale)")
	}
	op := &Op{Verb: verb.Update, Subresource: "scale", GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Precondition: body.GetResourceVersion()}
	return s.c.call(ctx, op, func() error {
		u, err := s.c.toUnstructured(body, body.GetObjectKind().GroupVersionKind())
		if err != nil {
			return err
		}
		out, err := s.c.env.Server.UpdateScale(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			FieldManager: s.c.manager(uo.FieldManager)}, u)
		if err != nil {
			return err
		}
		return decodeInto(out, body)
	})
}

func (s *subResourceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	po := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	body := obj
	if po.SubResourceBody != nil {
		body = po.SubResourceBody
	}
	return s.c.patch(ctx, obj, body, s.sub, patch, &po.PatchOptions)
}

func (s *subResourceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	ao := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
	if ao.SubResourceBody != nil {
		obj = ao.SubResourceBody
	}
	return s.c.applyConfig(ctx, obj, s.sub, &ao.ApplyOptions)
}

// rvInt parses a resourceVersion ("" = 0).
