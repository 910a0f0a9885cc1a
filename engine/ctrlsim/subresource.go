package ctrlsim

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
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
	op := &Op{Verb: "get", Subresource: s.sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return s.c.call(ctx, op, func() error {
		scale, err := s.c.env.Server.GetScale(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		if err != nil {
			return err
		}
		return decodeInto(scale, subResource)
	})
}

// Create implements client.SubResourceWriter: the eviction subresource of
// pods (subResource is a policy/v1 Eviction); others are refused.
func (s *subResourceClient) Create(ctx context.Context, obj client.Object, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	if s.sub != "eviction" {
		return apierrors.NewMethodNotSupported(schema.GroupResource{Resource: s.sub}, "create")
	}
	gvk, err := s.c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "create", Subresource: s.sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return s.c.call(ctx, op, func() error {
		body, err := s.c.toUnstructured(subResource, policyv1.SchemeGroupVersion.WithKind("Eviction"))
		if err != nil {
			return err
		}
		_, err = s.c.env.Server.Create(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: s.sub, FieldManager: s.c.name}, body)
		return err
	})
}

func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	if s.sub == "scale" {
		return s.updateScale(ctx, obj, uo)
	}
	return s.c.update(ctx, obj, s.sub, uo.FieldManager, len(uo.DryRun) > 0)
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
	op := &Op{Verb: "update", Subresource: "scale", GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Precondition: body.GetResourceVersion()}
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
