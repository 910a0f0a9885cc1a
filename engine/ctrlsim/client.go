package ctrlsim

import (
	"context"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
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

// call runs one API call under the Env lock with hooks around it; ctx
// names the actor making it (WithActor). A call refused with an error
// client-go's REST client retries (a 429 or 5xx with Retry-After) is made
// again after the delay, up to client-go's limit, as that client would
// (retry.go); each attempt is a call of its own to the hooks.
func (c *Client) call(ctx context.Context, op *Op, fn func() error) error {
	orig := *op
	for attempt := 0; ; attempt++ {
		err := c.callOnce(ctx, op, fn)
		if u, ok := c.hooks.(Ungater); ok {
			u.Ungate(op)
		}
		wait, retry := retryAfter(err)
		if !retry || fromSeam(ctx) || attempt >= clientGoMaxRetries {
			return err
		}
		time.Sleep(wait)
		*op = orig
	}
}

// callOnce is one attempt of call.
func (c *Client) callOnce(ctx context.Context, op *Op, fn func() error) error {
	if err := c.gate(ctx, op); err != nil {
		return err
	}
	c.env.mu.Lock()
	defer c.env.mu.Unlock()
	if err := c.hooks.BeforeCall(op); err != nil {
		op.Err = err
		return err
	}
	writes, err := c.env.Track(fn)
	op.Err = err
	for _, w := range writes {
		// The call's own writes (a create's RVBefore stays "").
		if op.IsWrite() {
			op.RVBefore = w.RVBefore
		}
		op.Written = append(op.Written, w.Events...)
	}
	c.hooks.AfterCall(op)
	return op.Err
}

// currentRV is the object's resourceVersion in the server now ("" if absent).
func (c *Client) currentRV(gvk schema.GroupVersionKind, ns, name string) string {
	u, _, err := c.env.Server.PeekAt(apiserver.Request{GVK: gvk, Namespace: ns, Name: name}, 0)
	if err != nil {
		return ""
	}
	return u.GetResourceVersion()
}

// Get implements client.Reader.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var caches func(runtime.Object, schema.GroupVersionKind) bool
	if c.cache != nil {
		caches = c.cache.caches
	}
	return c.get(ctx, key, obj, caches, opts...)
}

// get reads obj, through the cache when caches (nil: never) says so.
func (c *Client) get(ctx context.Context, key client.ObjectKey, obj client.Object, caches func(runtime.Object, schema.GroupVersionKind) bool, opts ...client.GetOption) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.Get, GVK: gvk, Namespace: key.Namespace, Name: key.Name}
	cached := caches != nil && caches(obj, gvk)
	op.Cached = cached // known before the call: a Gater may tell cached reads apart
	if cached {
		// controller-runtime's cache: its informer started and synced
		// before the call (its reflector watches through the seam, which
		// takes the Env lock), then read as controller-runtime reads it.
		inf, err := c.cache.readInformer(ctx, gvk, obj)
		if err != nil {
			return err
		}
		return c.call(ctx, op, func() error {
			op.ViewRev = indexedRV(inf)
			op.CurrentRV = c.currentRV(gvk, key.Namespace, key.Name)
			if err := c.cache.up.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			op.ObservedRV = obj.GetResourceVersion()
			return nil
		})
	}
	return c.call(ctx, op, func() error {
		u, err := c.env.Server.Get(apiserver.Request{GVK: gvk, Namespace: key.Namespace, Name: key.Name})
		if err != nil {
			return err
		}
		op.ObservedRV = u.GetResourceVersion()
		if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return replaceWith(u, obj, gvk)
		}
		return c.env.decodeStored(u, obj, gvk)
	})
}

// List implements client.Reader.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var caches func(runtime.Object, schema.GroupVersionKind) bool
	if c.cache != nil {
		caches = c.cache.caches
	}
	return c.list(ctx, list, caches, opts...)
}

// list lists, through the cache when caches (nil: never) says so.
func (c *Client) list(ctx context.Context, list client.ObjectList, caches func(runtime.Object, schema.GroupVersionKind) bool, opts ...client.ListOption) error {
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
	op := &Op{Verb: verb.List, GVK: gvk, Namespace: lo.Namespace}
	cached := caches != nil && caches(list, gvk)
	op.Cached = cached // known before the call: a Gater may tell cached reads apart
	if cached {
		// controller-runtime's cache, as in get.
		inf, err := c.cache.readInformer(ctx, gvk, list)
		if err != nil {
			return err
		}
		return c.call(ctx, op, func() error {
			op.ViewRev = indexedRV(inf)
			if err := c.cache.up.List(ctx, list, opts...); err != nil {
				return err
			}
			if err := sortList(list); err != nil {
				return err
			}
			op.Items = meta.LenList(list)
			return nil
		})
	}
	return c.call(ctx, op, func() error {
		sel := apiserver.ListOptions{Labels: lo.LabelSelector, Fields: lo.FieldSelector, Limit: lo.Limit, Continue: lo.Continue}
		if lo.Raw != nil {
			sel.ResourceVersion, sel.ResourceVersionMatch = lo.Raw.ResourceVersion, lo.Raw.ResourceVersionMatch
		}
		page, err := c.env.Server.ListPage(gvk, lo.Namespace, sel, 0)
		if err != nil {
			return err
		}
		op.Items = len(page.Items)
		if err := c.env.fillList(list, gvk, page.Items, page.RV); err != nil {
			return err
		}
		// A built-in kind's last page has no continue (its typed list
		// omits the empty field); a custom resource's list is an
		// UnstructuredList, whose continue kube's storage always sets
		// (APIObjectVersioner.UpdateList), "" on a last page (fidelity
		// case front/list-encoding).
		if lm, err := meta.ListAccessor(list); err == nil && (page.Continue != "" || c.isCR(gvk)) {
			lm.SetContinue(page.Continue)
		}
		if lm, err := meta.ListAccessor(list); err == nil {
			lm.SetRemainingItemCount(page.Remaining)
		}
		return nil
	})
}

// Create implements client.Writer.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	co := (&client.CreateOptions{}).ApplyOptions(opts)
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.Create, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return c.call(ctx, op, func() error {
		u, err := c.toUnstructured(obj, gvk)
		if err != nil {
			return err
		}
		out, err := c.env.Server.Create(withWire(ctx, apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(),
			FieldManager: c.manager(co.FieldManager), DryRun: len(co.DryRun) > 0, FieldValidation: co.FieldValidation}), u)
		if err != nil {
			return err
		}
		op.Name = out.GetName()
		op.RVAfter = out.GetResourceVersion()
		if len(co.DryRun) > 0 {
			return decodeInto(out, obj) // not stored
		}
		return c.env.decodeStored(out, obj, gvk)
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
	return c.update(ctx, obj, "", uo)
}

func (c *Client) update(ctx context.Context, obj client.Object, sub string, uo *client.UpdateOptions) error {
	fieldManager, dryRun := uo.FieldManager, len(uo.DryRun) > 0
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.Update, Subresource: sub, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Precondition: obj.GetResourceVersion()}
	return c.call(ctx, op, func() error {
		u, err := c.toUnstructured(obj, gvk)
		if err != nil {
			return err
		}
		out, err := c.env.Server.Update(withWire(ctx, apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: sub, FieldManager: c.manager(fieldManager), DryRun: dryRun, FieldValidation: uo.FieldValidation}), u)
		if err != nil {
			return err
		}
		op.RVAfter = out.GetResourceVersion()
		if dryRun {
			return decodeInto(out, obj) // not stored
		}
		return c.env.decodeStored(out, obj, gvk)
	})
}

// Patch implements client.Writer.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	return c.patch(ctx, obj, obj, "", patch, po)
}

// patch patches obj (or its subresource sub); the patch is computed from
// and the response decoded into body (obj itself unless a subresource body
// was given, as controller-runtime's WithSubResourceBody does).
func (c *Client) patch(ctx context.Context, obj, body client.Object, sub string, patch client.Patch, po *client.PatchOptions) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	data, err := patch.Data(body)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.Patch, Subresource: sub, PatchType: patch.Type(), GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if patch.Type() == types.ApplyPatchType || patch.Type() == types.ApplyYAMLPatchType {
		op.Verb = verb.Apply
	}
	op.Precondition = preconditionOf(data, patch.Type())
	return c.call(ctx, op, func() error {
		force := po.Force != nil && *po.Force
		manager := c.manager(po.FieldManager)
		if op.Verb == verb.Apply {
			// Apply has no default manager: the server requires one.
			manager = po.FieldManager
		}
		out, err := c.env.Server.Patch(withWire(ctx, apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Subresource: sub, FieldManager: manager, DryRun: len(po.DryRun) > 0, Force: force, FieldValidation: po.FieldValidation}), patch.Type(), data)
		if err != nil {
			return err
		}
		op.RVAfter = out.GetResourceVersion()
		if len(po.DryRun) > 0 {
			return decodeInto(out, body) // not stored
		}
		return c.env.decodeStored(out, body, gvk)
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
	return c.applyConfig(ctx, obj, "", ao)
}

func (c *Client) applyConfig(ctx context.Context, obj runtime.ApplyConfiguration, sub string, ao *client.ApplyOptions) error {
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
	op := &Op{Verb: verb.Apply, Subresource: sub, PatchType: types.ApplyPatchType, GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName(),
		Precondition: u.GetResourceVersion()}
	return c.call(ctx, op, func() error {
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
	_, err := c.delete(ctx, obj, *do.AsDeleteOptions())
	return err
}

// delete deletes obj with the options as the server receives them and
// returns what the server answered: the object as it now is when
// finalizers hold it, nil once it is gone. It takes metav1.DeleteOptions,
// not controller-runtime's: client.DeleteOptions.AsDeleteOptions overwrites
// Raw's propagation policy, preconditions, grace period and dry run with its
// own top-level fields, so a REST request's options carried in Raw alone
// would be lost (the REST seam calls this directly).
func (c *Client) delete(ctx context.Context, obj client.Object, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	gvk, err := c.gvk(obj)
	if err != nil {
		return nil, err
	}
	var held *unstructured.Unstructured
	op := &Op{Verb: verb.Delete, GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil {
		op.Precondition = *opts.Preconditions.ResourceVersion
	}
	err = c.call(ctx, op, func() error {
		out, err := c.env.Server.Delete(apiserver.Request{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			FieldManager: c.name, DryRun: len(opts.DryRun) > 0}, opts)
		if out != nil {
			op.RVAfter = out.GetResourceVersion()
			if out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) > 0 {
				held = out.DeepCopy()
			}
		}
		return err
	})
	return held, err
}

// DeleteAllOf implements client.Writer.
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	sel := apiserver.ListOptions{Labels: do.LabelSelector, Fields: do.FieldSelector}
	return c.deleteAllOf(ctx, obj, do.Namespace, sel, *do.AsDeleteOptions())
}

// deleteAllOf deletes every object of obj's kind in ns that sel selects,
// with the options as the server receives them (see delete).
func (c *Client) deleteAllOf(ctx context.Context, obj client.Object, ns string, sel apiserver.ListOptions, opts metav1.DeleteOptions) error {
	gvk, err := c.gvk(obj)
	if err != nil {
		return err
	}
	op := &Op{Verb: verb.DeleteAllOf, GVK: gvk, Namespace: ns}
	return c.call(ctx, op, func() error {
		if sel.Labels == nil {
			sel.Labels = labels.Everything()
		}
		return c.env.Server.DeleteCollection(gvk, ns, sel, opts, c.name)
	})
}

// isCR reports whether gvk is a custom resource's kind on the server.
func (c *Client) isCR(gvk schema.GroupVersionKind) bool {
	k, ok := c.env.Server.KindFor(gvk.GroupKind())
	return ok && k.CRD
}
