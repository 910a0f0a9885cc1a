package etcdkv_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/apitesting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
	"github.com/ctrlbugs/corpus/engine/store"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	codec  = apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

// podKind is the kind kube's storage tests store (example.apiserver.k8s.io
// Pods) under "/pods/"; markerKind is what increaseRV writes to move the
// revision without touching them.
var (
	podKind    = schema.GroupKind{Group: "example.apiserver.k8s.io", Kind: "Pod"}
	markerKind = schema.GroupKind{Group: "ctrlbugs.test", Kind: "Marker"}
)

// swapTransformer is the value transformer kube's tests swap mid-test
// (UpdatePrefixTransformer); kube's own test reaches into its store's
// fields, this delegates.
type swapTransformer struct {
	mu  sync.Mutex
	cur value.Transformer
}

func (s *swapTransformer) get() value.Transformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (s *swapTransformer) TransformFromStorage(ctx context.Context, data []byte, dc value.Context) ([]byte, bool, error) {
	return s.get().TransformFromStorage(ctx, data, dc)
}

func (s *swapTransformer) TransformToStorage(ctx context.Context, data []byte, dc value.Context) ([]byte, error) {
	return s.get().TransformToStorage(ctx, data, dc)
}

// conformanceStore is kube's etcd3 storage over a KV, as kube's storage
// tests want it.
type conformanceStore struct {
	storage.Interface
	kv       *etcdkv.KV
	tr       *swapTransformer
	prefix   *storagetesting.PrefixTransformer
	reads    *storagetesting.KVRecorder
	lists    *storagetesting.KubernetesRecorder
	markers  int
	markerMu sync.Mutex
}

func (c *conformanceStore) UpdatePrefixTransformer(modify storagetesting.PrefixTransformerModifier) func() {
	c.tr.mu.Lock()
	defer c.tr.mu.Unlock()
	prev := c.tr.cur
	p := *c.prefix // a copy, as kube's own test modifies one
	c.tr.cur = modify(&p)
	return func() {
		c.tr.mu.Lock()
		defer c.tr.mu.Unlock()
		c.tr.cur = prev
	}
}

// increaseRV writes a key outside the pods' prefix and returns its
// revision (kube's test puts an "increaseRV" key in etcd).
func (c *conformanceStore) increaseRV(ctx context.Context, t *testing.T) int64 {
	c.markerMu.Lock()
	c.markers++
	key := fmt.Sprintf("/markers/m%d", c.markers)
	c.markerMu.Unlock()
	if _, err := c.kv.Put(ctx, key, "{}"); err != nil {
		t.Fatalf("increaseRV: %v", err)
	}
	resp, err := c.kv.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("increaseRV: %v", err)
	}
	return resp.Kvs[0].ModRevision
}

// compact is kube's compaction at rv as its tests call it (etcd3.Compact):
// a write of kube's compaction key, then etcd's compaction.
func (c *conformanceStore) compact(ctx context.Context, t *testing.T, rv string) {
	v, err := storage.APIObjectVersioner{}.ParseResourceVersion(rv)
	if err != nil {
		t.Fatal(err)
	}
	c.increaseRV(ctx, t)
	if _, err := c.kv.Compact(ctx, int64(v)); err != nil {
		t.Fatalf("compact at %s: %v", rv, err)
	}
}

// calls checks how many values kube's storage decoded and how many ranges
// it read for a paged list: kube grows its etcd page size twofold (capped
// at 10000) while pages come back short, so pageSize p over n objects
// takes the smallest k with p + 2p + ... + 2^k p >= n, plus one.
func (c *conformanceStore) calls(t *testing.T, pageSize, processed uint64) {
	if got := c.prefix.GetReadsAndReset(); got != processed {
		t.Errorf("values read: %d, want %d", got, processed)
	}
	want := uint64(1)
	if pageSize != 0 {
		limit := pageSize
		for sum := uint64(1); sum < processed; {
			limit = min(limit*2, 10000)
			sum += limit
			want++
		}
	}
	if got := c.reads.GetReadsAndReset(); got != want {
		t.Fatalf("ranges read: %d, want %d", got, want)
	}
}

func setup(t *testing.T) (context.Context, *conformanceStore) {
	t.Helper()
	ctx := context.Background()
	kv, err := etcdkv.New(store.New(time.Now),
		etcdkv.Route{Prefix: "/pods/", Kind: podKind}, etcdkv.Route{Prefix: "/markers/", Kind: markerKind})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	// etcd's revision is 1 before the first write; the store's is 0 until
	// its first (an engine's store is never empty when served).
	if _, err := kv.Put(ctx, "/markers/initial", "{}"); err != nil {
		t.Fatal(err)
	}
	client := kv.Client(ctx)
	c := &conformanceStore{kv: kv, prefix: storagetesting.NewPrefixTransformer(nil, false)}
	c.tr = &swapTransformer{cur: c.prefix}
	c.reads = storagetesting.NewKVRecorder(client.KV)
	client.KV = c.reads
	c.lists = storagetesting.NewKubernetesRecorder(client.Kubernetes)
	client.Kubernetes = c.lists
	lm := etcd3.NewDefaultLeaseManagerConfig()
	lm.ReuseDurationSeconds = 1 // as kube's test: TTL tests wait at most 30 s
	c.Interface, err = etcdkv.NewStorage(client, etcdkv.StorageConfig{
		Codec: codec, NewFunc: func() runtime.Object { return &example.Pod{} },
		NewListFunc: func() runtime.Object { return &example.PodList{} },
		Prefix:      "", ResourcePrefix: "/pods/", Resource: schema.GroupResource{Resource: "pods"},
		Transformer: c.tr, LeaseManager: lm,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c
}

// stored checks what kube wrote at key: one object, without
// resourceVersion or selfLink (kube's own test's invariant, selfLink
// deprecated as it is).
func (c *conformanceStore) stored(ctx context.Context, t *testing.T, key string) {
	resp, err := c.kv.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s from the KV: %v (%d values)", key, err, len(resp.Kvs))
	}
	obj, err := runtime.Decode(codec, resp.Kvs[0].Value)
	if err != nil {
		t.Fatalf("decode %s: %v\n%s", key, err, resp.Kvs[0].Value)
	}
	if p := obj.(*example.Pod); p.ResourceVersion != "" || p.SelfLink != "" { //nolint:staticcheck // kube's own test checks the deprecated selfLink too
		t.Errorf("stored %s has resourceVersion %q, selfLink %q; want both empty", key, p.ResourceVersion, p.SelfLink) //nolint:staticcheck // as above
	}
}

// TestStorageConformance runs kube-apiserver's own storage tests
// (k8s.io/apiserver/pkg/storage/testing) against kube's etcd3 storage over
// the engine's store, as kube runs them against etcd
// (pkg/storage/etcd3/store_test.go, watcher_test.go). The cases that
// cannot apply are listed in notApplicable, each with why.
func TestStorageConformance(t *testing.T) {
	cases := map[string]func(ctx context.Context, t *testing.T, c *conformanceStore){
		"Create": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestCreate(ctx, t, c, c.stored)
		},
		"CreateWithTTL": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestCreateWithTTL(ctx, t, c)
		},
		"CreateWithKeyExist": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestCreateWithKeyExist(ctx, t, c)
		},
		"Get": func(ctx context.Context, t *testing.T, c *conformanceStore) { storagetesting.RunTestGet(ctx, t, c) },
		"UnconditionalDelete": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestUnconditionalDelete(ctx, t, c)
		},
		"ConditionalDelete": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestConditionalDelete(ctx, t, c)
		},
		"DeleteWithSuggestion": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDeleteWithSuggestion(ctx, t, c)
		},
		"DeleteWithSuggestionAndConflict": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDeleteWithSuggestionAndConflict(ctx, t, c)
		},
		"DeleteWithSuggestionOfDeletedObject": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDeleteWithSuggestionOfDeletedObject(ctx, t, c)
		},
		"ValidateDeletionWithSuggestion": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestValidateDeletionWithSuggestion(ctx, t, c)
		},
		"ValidateDeletionWithOnlySuggestionValid": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(ctx, t, c)
		},
		"DeleteWithConflict": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDeleteWithConflict(ctx, t, c)
		},
		"PreconditionalDeleteWithSuggestion": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestPreconditionalDeleteWithSuggestion(ctx, t, c)
		},
		"PreconditionalDeleteWithOnlySuggestionPass": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(ctx, t, c)
		},
		"ListPaging": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListPaging(ctx, t, c)
		},
		"GetListNonRecursive": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGetListNonRecursive(ctx, t, c.increaseRV, c)
		},
		"GetListRecursivePrefix": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGetListRecursivePrefix(ctx, t, c)
		},
		"KeySchema": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestKeySchema(ctx, t, c)
		},
		"GuaranteedUpdate": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGuaranteedUpdate(ctx, t, c, c.stored)
		},
		"GuaranteedUpdateWithTTL": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGuaranteedUpdateWithTTL(ctx, t, c)
		},
		"GuaranteedUpdateChecksStoredData": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGuaranteedUpdateChecksStoredData(ctx, t, c)
		},
		"GuaranteedUpdateWithConflict": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGuaranteedUpdateWithConflict(ctx, t, c)
		},
		"GuaranteedUpdateWithSuggestionAndConflict": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(ctx, t, c)
		},
		"List": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestList(ctx, t, c, c.compact, false, c.lists)
		},
		"ConsistentList": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestConsistentList(ctx, t, c, c.increaseRV, false, true, false)
		},
		"ListContinuation": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListContinuation(ctx, t, c, c.calls)
		},
		"ListPaginationRareObject": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListPaginationRareObject(ctx, t, c, c.calls)
		},
		"ListContinuationWithFilter": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListContinuationWithFilter(ctx, t, c, c.calls)
		},
		"NamespaceScopedList": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestNamespaceScopedList(ctx, t, c)
		},
		"ListInconsistentContinuation": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListInconsistentContinuation(ctx, t, c, c.compact)
		},
		"ListResourceVersionMatch": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestListResourceVersionMatch(ctx, t, c)
		},
		"Stats": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestStats(ctx, t, c, codec, c.tr, false)
		},
		"StatsSizeBasedListCostEstimate": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			if err := c.EnableResourceSizeEstimation(c.keys); err != nil {
				t.Fatal(err)
			}
			storagetesting.RunTestStats(ctx, t, c, codec, c.tr, true)
		},
		"WatchSemanticsWithConcurrentDecode": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ConcurrentWatchObjectDecode, true)
			storagetesting.RunWatchSemantics(ctx, t, c)
		},
		"Watch": func(ctx context.Context, t *testing.T, c *conformanceStore) { storagetesting.RunTestWatch(ctx, t, c) },
		"ClusterScopedWatch": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestClusterScopedWatch(ctx, t, c)
		},
		"NamespaceScopedWatch": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestNamespaceScopedWatch(ctx, t, c)
		},
		"DeleteTriggerWatch": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDeleteTriggerWatch(ctx, t, c)
		},
		"WatchFromZero": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchFromZero(ctx, t, c, c.compact)
		},
		"WatchFromNonZero": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchFromNonZero(ctx, t, c)
		},
		"DelayedWatchDelivery": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestDelayedWatchDelivery(ctx, t, c)
		},
		"WatchError": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchError(ctx, t, c)
		},
		"WatchContextCancel": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchContextCancel(ctx, t, c)
		},
		"WatcherTimeout": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatcherTimeout(ctx, t, c)
		},
		"WatchDeleteEventObjectHaveLatestRV": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV(ctx, t, c)
		},
		"WatchInitializationSignal": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchInitializationSignal(ctx, t, c)
		},
		"WatchDispatchBookmarkEvents": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunTestWatchDispatchBookmarkEvents(ctx, t, c, false)
		},
		"SendInitialEventsBackwardCompatibility": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunSendInitialEventsBackwardCompatibility(ctx, t, c)
		},
		"WatchSemantics": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunWatchSemantics(ctx, t, c)
		},
		"WatchSemanticInitialEventsExtended": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunWatchSemanticInitialEventsExtended(ctx, t, c)
		},
		"WatchListMatchSingle": func(ctx context.Context, t *testing.T, c *conformanceStore) {
			storagetesting.RunWatchListMatchSingle(ctx, t, c)
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, c := setup(t)
			run(ctx, t, c)
		})
	}
	for name, why := range notApplicable {
		t.Run(name, func(t *testing.T) { t.Skip(why) })
	}
}

// notApplicable names kube's storage tests that do not run here, and why.
var notApplicable = map[string]string{
	"WatchErrorIsBlockingFurtherEvents": "it writes values that are not JSON (another transformer's prefix); " +
		"the engine's store holds objects, and the engine runs kube's identity transformer",
	"TransformationFailure": "it writes values that are not JSON (another transformer's prefix), as WatchErrorIsBlockingFurtherEvents",
	"WatchWithUnsafeDelete": "it needs kube's etcd3-internal corrupt-object error from the transformer " +
		"(an unexported type its own test builds); the engine never stores unreadable values",
	"CompactRevision": "it needs kube's etcd compactor, which watches its compaction key; " +
		"the engine compacts only when asked (KV.Compact), and kube's storage is given no compactor",
	"ProgressNotify": "RunOptionalTestProgressNotify waits for etcd's periodic progress notifications " +
		"(a server interval); the KV sends them only on RequestProgress",
	"OptionalWatchBookmarksWithCorrectResourceVersion": "a test of kube's watch cache (cacher), " +
		"which kube's etcd3 tests do not run either",
}

// keys lists the pods' keys, as kube's store lists them for its size
// estimate.
func (c *conformanceStore) keys(ctx context.Context) ([]string, error) {
	resp, err := c.kv.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Key))
	}
	return out, nil
}
