package fidelity

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// quietTB keeps the real apiserver's per-test log output out of the test log
// (it is very chatty); FIDELITY_VERBOSE=1 lets it through.
type quietTB struct{ *testing.T }

func (q quietTB) Log(args ...any) {
	if os.Getenv("FIDELITY_VERBOSE") != "" {
		q.T.Log(args...)
	}
}

func (q quietTB) Logf(format string, args ...any) {
	if os.Getenv("FIDELITY_VERBOSE") != "" {
		q.T.Logf(format, args...)
	}
}

func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return url.Parse("http://" + l.Addr().String())
}

// startEtcd runs an embedded etcd on random loopback ports in a temp dir.
func startEtcd(t *testing.T) (clientURL string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "fidelity-etcd")
	if err != nil {
		return "", nil, err
	}
	cu, err := freeLoopbackURL()
	if err != nil {
		return "", nil, err
	}
	pu, err := freeLoopbackURL()
	if err != nil {
		return "", nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "fidelity"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "panic" // teardown logs spurious "server closed" errors
	if os.Getenv("FIDELITY_VERBOSE") != "" {
		cfg.LogLevel = "info"
	}
	cfg.Logger = "zap"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("embedded etcd did not become ready")
	}
	return cu.String(), func() { e.Close(); os.RemoveAll(dir) }, nil
}

// startRealServer starts embedded etcd and an in-process kube-apiserver
// (no controller-manager: no garbage collector, no namespace controller).
func startRealServer(t *testing.T) (*rest.Config, func(), error) {
	if os.Getenv("FIDELITY_VERBOSE") == "" {
		// kube-apiserver and its etcd client log through klog to stderr.
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	etcdURL, stopEtcd, err := startEtcd(t)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	sc := storagebackend.NewDefaultConfig(path.Join(string(uuid.NewUUID()), "registry"), nil)
	sc.Transport.ServerList = []string{etcdURL}
	// No --bind-address: StartTestServer already listens on a random
	// 127.0.0.1 port, and any flag that changes the serving cert's names makes
	// it write a new self-signed cert "fixture" into k8s.io/kubernetes'
	// testdata directory inside the module cache (go mod verify then fails).
	ts, err := kubeapiservertesting.StartTestServer(quietTB{t}, nil, nil, sc)
	if err != nil {
		stopEtcd()
		return nil, nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	if err := checkFixtureDir(ts.ServerOpts.SecureServing.ServerCert.FixtureDirectory); err != nil {
		ts.TearDownFn()
		stopEtcd()
		return nil, nil, err
	}
	t.Logf("real kube-apiserver at %s", ts.ClientConfig.Host)
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.QPS, cfg.Burst = 1000, 2000
	// the loopback config asks for protobuf; controllers normally talk JSON
	// (and controller-runtime's Apply only decodes JSON responses).
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	return cfg, func() { ts.TearDownFn(); stopEtcd() }, nil
}

// installCRDsReal creates the CRDs and waits until they are Established and
// their resources are served.
func installCRDsReal(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		if err := c.Create(ctx, crd.DeepCopy(), client.FieldOwner(fieldOwner)); err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, got); err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not Established: %w", crd.Name, err)
		}
	}
	return nil
}

// checkFixtureDir fails if kube-apiserver generated a serving-cert fixture
// inside the (read-only) module cache copy of k8s.io/kubernetes: upstream
// code must stay unmodified (go mod verify).
func checkFixtureDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && info.Mode().Perm()&0o200 != 0 {
			return fmt.Errorf("kube-apiserver wrote %s into the module cache; delete it and do not pass flags that change the serving certificate's names", filepath.Join(dir, e.Name()))
		}
	}
	return nil
}
