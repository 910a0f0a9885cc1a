package sample

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Recorder is an upstream-style runnable that builds its own client-go
// clientset and informer from a rest.Config (as KRO and Cluster API do),
// with a private workqueue and one worker: for every ConfigMap labelled
// "watched=yes" it sees, it records the name in data of the ConfigMap
// "seen".
type Recorder struct {
	Config *rest.Config
}

// Start implements manager.Runnable.
func (r *Recorder) Start(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(r.Config)
	if err != nil {
		return err
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "watched=yes"
	}))
	inf := f.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		q.Add(o.(*corev1.ConfigMap).Name)
	}}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for {
		name, shutdown := q.Get()
		if shutdown {
			f.Shutdown()
			return nil
		}
		err := r.record(ctx, cs, name)
		q.Done(name)
		if err != nil {
			q.AddRateLimited(name)
		}
	}
}

func (r *Recorder) record(ctx context.Context, cs kubernetes.Interface, name string) error {
	seen, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "seen", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "seen"},
			Data: map[string]string{name: "1"}}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("get seen: %w", err)
	}
	if seen.Data == nil {
		seen.Data = map[string]string{}
	}
	seen.Data[name] = "1"
	_, err = cs.CoreV1().ConfigMaps("default").Update(ctx, seen, metav1.UpdateOptions{})
	return err
}
