package ctrlsim

import (
	"context"
	"encoding/json"
	"fmt"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// Client is a controller-runtime client.Client for one controller identity.
// Reads of cached kinds come from the controller's informer view; all other
// reads and every write go to the server.
type Client struct {
	env   *Env
	name  string // controller identity; the default field manager
	hooks Hooks
	// cache answers cached reads; nil means every read is live.
	cache *Cache
}

var _ client.Client = (*Client)(nil)

// NewDirectClient returns a client whose reads and writes all go straight to
// the server, with no recording: for tests and the fidelity suite. Its
// default field manager is "ctrlsim" (pass client.FieldOwner to choose).
func NewDirectClient(srv *apiserver.Server, scheme *runtime.Scheme) client.Client {
	env := NewEnv(srv)
	if scheme != nil {
		env.Scheme = scheme
	}
	return &Client{env: env, name: "ctrlsim", hooks: NopHooks{}}
}

// Scheme implements client.Client.
func (c *Client) Scheme() *runtime.Scheme { return c.env.Scheme }

// RESTMapper implements client.Client.
func (c *Client) RESTMapper() meta.RESTMapper { return c.env.Server.RESTMapper() }

// GroupVersionKindFor implements client.Client.
func (c *Client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.env.Scheme)
}

// IsObjectNamespaced implements client.Client.
func (c *Client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return false, err
	}
	k, ok := c.env.Server.KindFor(gvk.GroupKind())
	if !ok {
		return false, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return k.Namespaced, nil
}

func (c *Client) gvk(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, c.env.Scheme)
	if err != nil {
		return gvk, err
	}
	if _, ok := c.env.Server.KindFor(gvk.GroupKind()); !ok {
		return gvk, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return gvk, nil
}

// call runs one API call under the Env lock with hooks around it.
func (c *Client) call(op *Op, fn func() error) error {
	c.env.mu.Lock()
	defer c.env.mu.Unlock()
	op.Controller = c.name
	if err := c.hooks.BeforeCall(op); err != nil {
		op.Err = err
		return err
	}
	op.Err = fn()
	c.hooks.AfterCall(op)
	return op.Err
}

// currentRV is the object's resourceVersion in the server now ("" if absent).
func (c *Client) currentRV(gvk schema.GroupVersionKind, ns, name string) string {
	u, err := c.env.Server.Get(apiserver.Request{GVK: gvk, Namespace: ns, Name: name})
	if err != nil {
		return ""
	}
	return u.GetResourceVersion()
}

// toUnstructured encodes obj as the server would receive it (its JSON).
func (c *Client) toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	// apimachinery's decoding, as the server's: whole numbers become int64.
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// decodeInto writes a server response into obj. The fidelity suite shows
// that controller-runtime's typed client leaves exactly the response in the
// caller's object (no stale fields or map entries survive), so typed objects
// are replaced, not merged into.
func decodeInto(u *unstructured.Unstructured, obj runtime.Object) error {
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return decodeIntoJSON(u, obj)
	}
	if u.GetKind() == "Scale" { // a scale subresource body: plain JSON decoding
		return decodeIntoJSON(u, obj)
	}
	return replaceWith(u, obj, u.GroupVersionKind())
}

func decodeIntoJSON(u *unstructured.Unstructured, obj runtime.Object) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = u.DeepCopy().Object
		return nil
	case *metav1.PartialObjectMetadata:
		gvk := o.GroupVersionKind()
		data, err := json.Marshal(map[string]any{"metadata": u.Object["metadata"]})
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, o); err != nil {
			return err
		}
		o.SetGroupVersionKind(gvk)
		return nil
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, obj)
}

// replaceWith sets obj to exactly u, as the cache reader does (it assigns a
// deep copy of the cached object to the caller's value).
func replaceWith(u *unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = u.DeepCopy().Object
		return nil
	case *metav1.PartialObjectMetadata:
		*o = metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(gvk)
		return decodeInto(u, o)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("ctrlsim: object must be a non-nil pointer, got %T", obj)
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// Get implements client.Reader.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "get", GVK: gvk, Namespace: key.Namespace, Name: key.Name}
	cached := c.cache != nil && c.cache.caches(obj, gvk)
	return c.call(op, func() error {
		if cached {
			op.Cached = true
			op.ViewRev = c.hooks.CacheRevision(gvk.GroupKind())
			op.CurrentRV = c.currentRV(gvk, key.Namespace, key.Name)
			u, err := c.env.Server.GetAt(apiserver.Request{GVK: gvk, Namespace: key.Namespace, Name: key.Name}, op.ViewRev)
			if err != nil {
				return err
			}
			op.ObservedRV = u.GetResourceVersion()
			return replaceWith(u, obj, gvk)
		}
		u, err := c.env.Server.Get(apiserver.Request{GVK: gvk, Namespace: key.Namespace, Name: key.Name})
		if err != nil {
			return err
		}
		op.ObservedRV = u.GetResourceVersion()
		if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return replaceWith(u, obj, gvk)
		}
		return decodeInto(u, obj)
	})
}

// List implements client.Reader.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	gvk, err := apiutil.GVKForObject(list, c.env.Scheme)
	if err != nil {
		return err
	}
	if isList := len(gvk.Kind) > 4 && gvk.Kind[len(gvk.Kind)-4:] == "List"; isList {
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-4]
	}
	if _, ok := c.env.Server.KindFor(gvk.GroupKind()); !ok {
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	op := &Op{Verb: "list", GVK: gvk, Namespace: lo.Namespace}
	cached := c.cache != nil && c.cache.cachesList(list, gvk)
	return c.call(op, func() error {
		sel := apiserver.ListOptions{Labels: lo.LabelSelector}
		var indexed fields.Selector
		if cached {
			op.Cached = true
			op.ViewRev = c.hooks.CacheRevision(gvk.GroupKind())
			indexed = lo.FieldSelector
			if indexed != nil {
				if err := c.cache.checkIndexed(gvk, indexed); err != nil {
					return err
				}
			}
		} else {
			sel.Fields = lo.FieldSelector
		}
		if !cached {
			sel.Limit, sel.Continue = lo.Limit, lo.Continue
		}
		page, err := c.env.Server.ListPage(gvk, lo.Namespace, sel, op.ViewRev)
		if err != nil {
			return err
		}
		items, rv := page.Items, page.RV
		if indexed != nil {
			if items, err = c.cache.filterIndexed(gvk, items, indexed); err != nil {
				return err
			}
		}
		if cached && lo.Limit > 0 && int64(len(items)) > lo.Limit {
			items = items[:lo.Limit]
		}
		op.Items = len(items)
		if err := fillList(c.env.Scheme, list, gvk, items, rv); err != nil {
			return err
		}
		if lm, err := meta.ListAccessor(list); err == nil {
			lm.SetContinue(page.Continue)
			lm.SetRemainingItemCount(page.Remaining)
		}
		return nil
	})
}

func fillList(scheme *runtime.Scheme, list client.ObjectList, gvk schema.GroupVersionKind, items []*unstructured.Unstructured, rv string) error {
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		l.Items = nil
		for _, it := range items {
			l.Items = append(l.Items, *it)
		}
		l.SetResourceVersion(rv)
		return nil
	case *metav1.PartialObjectMetadataList:
		l.Items = nil
		for _, it := range items {
			p := metav1.PartialObjectMetadata{}
			if err := replaceWith(it, &p, gvk); err != nil {
				return err
			}
			l.Items = append(l.Items, p)
		}
		l.ResourceVersion = rv
		return nil
	}
	var objs []runtime.Object
	for _, it := range items {
		obj, err := scheme.New(gvk)
		if err != nil {
			return err
		}
		if err := replaceWith(it, obj, gvk); err != nil {
			return err
		}
		objs = append(objs, obj)
	}
	if err := meta.SetList(list, objs); err != nil {
		return err
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(rv)
	}
	return nil
}

// Create implements client.Writer.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	co := (&client.CreateOptions{}).ApplyOptions(opts)
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "create", GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return c.call(op, func() error {
		u, err := c.toUnstructured(obj, gvk)
		if err != nil {
			return err
		}
		out, err := c.env.Server.Create(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(),
			FieldManager: c.manager(co.FieldManager), DryRun: len(co.DryRun) > 0}, u)
		if err != nil {
			return err
		}
		op.Name = out.GetName()
		op.RVAfter = out.GetResourceVersion()
		return decodeInto(out, obj)
	})
}

func (c *Client) manager(m string) string {
	if m != "" {
		return m
	}
	return c.name
}

// Update implements client.Writer.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	uo := (&client.UpdateOptions{}).ApplyOptions(opts)
	return c.update(obj, "", uo.FieldManager, len(uo.DryRun) > 0)
}

func (c *Client) update(obj client.Object, sub, fieldManager string, dryRun bool) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "update", Subresource: sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Precondition: obj.GetResourceVersion()}
	return c.call(op, func() error {
		u, err := c.toUnstructured(obj, gvk)
		if err != nil {
			return err
		}
		op.RVBefore = c.currentRV(gvk, obj.GetNamespace(), obj.GetName())
		out, err := c.env.Server.Update(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: sub, FieldManager: c.manager(fieldManager), DryRun: dryRun}, u)
		if err != nil {
			return err
		}
		op.RVAfter = out.GetResourceVersion()
		return decodeInto(out, obj)
	})
}

// Patch implements client.Writer.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	return c.patch(obj, obj, "", patch, po)
}

// patch patches obj (or its subresource sub); the patch is computed from
// and the response decoded into body (obj itself unless a subresource body
// was given, as controller-runtime's WithSubResourceBody does).
func (c *Client) patch(obj, body client.Object, sub string, patch client.Patch, po *client.PatchOptions) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	data, err := patch.Data(body)
	if err != nil {
		return err
	}
	op := &Op{Verb: "patch", Subresource: sub, PatchType: string(patch.Type()), GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if patch.Type() == types.ApplyPatchType || patch.Type() == types.ApplyYAMLPatchType {
		op.Verb = "apply"
	}
	op.Precondition = preconditionOf(data, patch.Type())
	return c.call(op, func() error {
		op.RVBefore = c.currentRV(gvk, obj.GetNamespace(), obj.GetName())
		force := po.Force != nil && *po.Force
		manager := c.manager(po.FieldManager)
		if op.Verb == "apply" {
			// Apply has no default manager: the server requires one.
			manager = po.FieldManager
		}
		out, err := c.env.Server.Patch(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: sub, FieldManager: manager, DryRun: len(po.DryRun) > 0, Force: force}, patch.Type(), data)
		if err != nil {
			return err
		}
		op.RVAfter = out.GetResourceVersion()
		return decodeInto(out, body)
	})
}

// preconditionOf extracts metadata.resourceVersion from a merge patch or
// apply body: the precondition it carries.
func preconditionOf(data []byte, pt types.PatchType) string {
	if pt == types.JSONPatchType {
		return ""
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &body)
	return body.Metadata.ResourceVersion
}

// Apply implements client.Writer (server-side apply of an apply configuration).
func (c *Client) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	ao := (&client.ApplyOptions{}).ApplyOptions(opts)
	return c.applyConfig(obj, "", ao)
}

func (c *Client) applyConfig(obj runtime.ApplyConfiguration, sub string, ao *client.ApplyOptions) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return err
	}
	gvk := u.GroupVersionKind()
	if _, ok := c.env.Server.KindFor(gvk.GroupKind()); !ok {
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	op := &Op{Verb: "apply", Subresource: sub, PatchType: string(types.ApplyPatchType), GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName(),
		Precondition: u.GetResourceVersion()}
	return c.call(op, func() error {
		op.RVBefore = c.currentRV(gvk, u.GetNamespace(), u.GetName())
		force := ao.Force != nil && *ao.Force
		out, err := c.env.Server.Patch(apiserver.Request{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName(), Subresource: sub,
			FieldManager: ao.FieldManager, DryRun: len(ao.DryRun) > 0, Force: force}, types.ApplyPatchType, data)
		if err != nil {
			return err
		}
		op.RVAfter = out.GetResourceVersion()
		body, err := json.Marshal(out.Object)
		if err != nil {
			return err
		}
		return json.Unmarshal(body, obj)
	})
}

// Delete implements client.Writer.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	do := (&client.DeleteOptions{}).ApplyOptions(opts)
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "delete", GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if do.Preconditions != nil && do.Preconditions.ResourceVersion != nil {
		op.Precondition = *do.Preconditions.ResourceVersion
	}
	return c.call(op, func() error {
		op.RVBefore = c.currentRV(gvk, obj.GetNamespace(), obj.GetName())
		out, err := c.env.Server.Delete(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			FieldManager: c.name, DryRun: len(do.DryRun) > 0}, *do.AsDeleteOptions())
		if out != nil {
			op.RVAfter = out.GetResourceVersion()
		}
		return err
	})
}

// DeleteAllOf implements client.Writer.
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: "deleteAllOf", GVK: gvk, Namespace: do.Namespace}
	return c.call(op, func() error {
		sel := apiserver.ListOptions{Labels: do.LabelSelector, Fields: do.FieldSelector}
		if sel.Labels == nil {
			sel.Labels = labels.Everything()
		}
		return c.env.Server.DeleteCollection(gvk, do.Namespace, sel, *do.AsDeleteOptions(), c.name)
	})
}

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
	return s.c.call(op, func() error {
		scale, err := s.c.env.Server.GetScale(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		if err != nil {
			return err
		}
		return decodeInto(scale, subResource)
	})
}

func (s *subResourceClient) Create(ctx context.Context, obj client.Object, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{Resource: s.sub}, "create")
}

func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	if s.sub == "scale" {
		return s.updateScale(obj, uo)
	}
	return s.c.update(obj, s.sub, uo.FieldManager, len(uo.DryRun) > 0)
}

func (s *subResourceClient) updateScale(obj client.Object, uo *client.SubResourceUpdateOptions) error {
	gvk, err := s.c.gvk(obj)
	if err != nil {
		return err
	}
	body := uo.SubResourceBody
	if body == nil {
		return apierrors.NewBadRequest("ctrlsim: scale update needs a SubResourceBody (an autoscaling/v1 Scale)")
	}
	op := &Op{Verb: "update", Subresource: "scale", GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Precondition: body.GetResourceVersion()}
	return s.c.call(op, func() error {
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
	return s.c.patch(obj, body, s.sub, patch, &po.PatchOptions)
}

func (s *subResourceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	ao := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
	if ao.SubResourceBody != nil {
		obj = ao.SubResourceBody
	}
	return s.c.applyConfig(obj, s.sub, &ao.ApplyOptions)
}

// rvInt parses a resourceVersion ("" = 0).
func rvInt(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}
