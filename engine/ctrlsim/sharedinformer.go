package ctrlsim

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	toolscache "k8s.io/client-go/tools/cache"
)

// An Informer is also client-go's SharedIndexInformer (Cluster API asserts
// it and reads its store's LastStoreSyncResourceVersion). Its store and
// indexer are read-only views of the controller's cache at its position:
// what the informer has delivered, nothing newer. The engine moves the
// position (Cache.Sync); Run only waits.
var _ toolscache.SharedIndexInformer = (*Informer)(nil)

// errReadOnly is returned by the store's mutators: the engine owns the
// cache's contents.
var errReadOnly = errors.New("ctrlsim: an informer's store is the engine's view of the server; it cannot be written")

// GetStore implements SharedInformer.
func (i *Informer) GetStore() toolscache.Store { return informerStore{i} }

// GetIndexer implements SharedIndexInformer.
func (i *Informer) GetIndexer() toolscache.Indexer { return informerStore{i} }

// GetController implements SharedInformer: a controller that only waits.
func (i *Informer) GetController() toolscache.Controller { return waitingController{i} }

// Run implements SharedInformer: the engine delivers events; Run returns
// when stopCh closes.
func (i *Informer) Run(stopCh <-chan struct{}) { <-stopCh }

// RunWithContext implements SharedInformer.
func (i *Informer) RunWithContext(ctx context.Context) { <-ctx.Done() }

// LastSyncResourceVersion implements SharedInformer: the revision the
// informer shows.
func (i *Informer) LastSyncResourceVersion() string { return strconv.FormatInt(i.Pos(), 10) }

// SetWatchErrorHandler implements SharedInformer (the engine's watches do
// not fail).
func (i *Informer) SetWatchErrorHandler(toolscache.WatchErrorHandler) error { return nil }

// SetWatchErrorHandlerWithContext implements SharedInformer.
func (i *Informer) SetWatchErrorHandlerWithContext(toolscache.WatchErrorHandlerWithContext) error {
	return nil
}

// SetTransform implements SharedInformer: the transform applies to every
// object the informer hands out, as client-go applies it before storing.
func (i *Informer) SetTransform(fn toolscache.TransformFunc) error {
	i.transform = fn
	return nil
}

// AddIndexers implements SharedIndexInformer and cache.Informer: client-go
// indexers serve GetIndexer; IndexField indexes serve MatchingFields.
func (i *Informer) AddIndexers(ix toolscache.Indexers) error {
	if i.indexers == nil {
		i.indexers = toolscache.Indexers{}
	}
	for name, fn := range ix {
		if _, dup := i.indexers[name]; dup {
			return fmt.Errorf("indexer conflict: %s", name)
		}
		i.indexers[name] = fn
	}
	return nil
}

// informerStore is the read-only Store and Indexer of an Informer.
type informerStore struct{ i *Informer }

var _ toolscache.Indexer = informerStore{}

// objects returns the informer's objects at its position, keyed as
// client-go keys them (namespace/name).
func (s informerStore) objects() ([]any, []string, error) {
	i := s.i
	env := i.cache.client.env
	env.Lock()
	srv := env.Server
	k, ok := srv.KindFor(i.GVK.GroupKind())
	var objs []any
	var keys []string
	if ok {
		for _, u := range srv.Store().List(k.GVK.GroupKind(), "", i.Pos()) {
			obj, err := i.convert(u)
			if err != nil {
				env.Unlock()
				return nil, nil, err
			}
			key, err := toolscache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				env.Unlock()
				return nil, nil, err
			}
			objs = append(objs, obj)
			keys = append(keys, key)
		}
	}
	env.Unlock()
	return objs, keys, nil
}

func (s informerStore) List() []any {
	objs, _, _ := s.objects()
	return objs
}

func (s informerStore) ListKeys() []string {
	_, keys, _ := s.objects()
	return keys
}

func (s informerStore) Get(obj any) (any, bool, error) {
	key, err := toolscache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(key)
}

func (s informerStore) GetByKey(key string) (any, bool, error) {
	objs, keys, err := s.objects()
	if err != nil {
		return nil, false, err
	}
	for n, k := range keys {
		if k == key {
			return objs[n], true, nil
		}
	}
	return nil, false, nil
}

// LastStoreSyncResourceVersion is the revision the informer shows.
func (s informerStore) LastStoreSyncResourceVersion() string { return s.i.LastSyncResourceVersion() }

func (s informerStore) Add(any) error                    { return errReadOnly }
func (s informerStore) Update(any) error                 { return errReadOnly }
func (s informerStore) Delete(any) error                 { return errReadOnly }
func (s informerStore) Replace([]any, string) error      { return errReadOnly }
func (s informerStore) Resync() error                    { return nil }
func (s informerStore) Bookmark(string)                  {}
func (s informerStore) GetIndexers() toolscache.Indexers { return s.i.indexers }
func (s informerStore) AddIndexers(ix toolscache.Indexers) error {
	return s.i.AddIndexers(ix)
}

func (s informerStore) Index(name string, obj any) ([]any, error) {
	fn, ok := s.i.indexers[name]
	if !ok {
		return nil, fmt.Errorf("index with name %s does not exist", name)
	}
	vals, err := fn(obj)
	if err != nil {
		return nil, err
	}
	var out []any
	seen := map[string]bool{}
	for _, v := range vals {
		items, err := s.ByIndex(name, v)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			k, _ := toolscache.MetaNamespaceKeyFunc(it)
			if !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
	}
	return out, nil
}

func (s informerStore) ByIndex(name, value string) ([]any, error) {
	fn, ok := s.i.indexers[name]
	if !ok {
		return nil, fmt.Errorf("index with name %s does not exist", name)
	}
	objs, _, err := s.objects()
	if err != nil {
		return nil, err
	}
	var out []any
	for _, o := range objs {
		vals, err := fn(o)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if v == value {
				out = append(out, o)
				break
			}
		}
	}
	return out, nil
}

func (s informerStore) IndexKeys(name, value string) ([]string, error) {
	objs, err := s.ByIndex(name, value)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		k, err := toolscache.MetaNamespaceKeyFunc(o)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func (s informerStore) ListIndexFuncValues(name string) []string {
	fn, ok := s.i.indexers[name]
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, o := range s.List() {
		vals, _ := fn(o)
		for _, v := range vals {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// waitingController is the Controller of an Informer: the engine runs the
// informer, so there is nothing to run.
type waitingController struct{ i *Informer }

func (waitingController) Run(stopCh <-chan struct{})         { <-stopCh }
func (waitingController) RunWithContext(ctx context.Context) { <-ctx.Done() }
func (waitingController) HasSynced() bool                    { return true }
func (waitingController) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{}
}
func (c waitingController) LastSyncResourceVersion() string { return c.i.LastSyncResourceVersion() }
