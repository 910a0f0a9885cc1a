// Package kubescheduler runs the real kube-scheduler
// (k8s.io/kubernetes/pkg/scheduler, unmodified, at the engine's pinned
// Kubernetes version) as an engine process.
//
// Setup builds it as cmd/kube-scheduler's Setup and Run do
// (cmd/kube-scheduler/app/server.go): the default configuration
// (config/latest.Default, the v1 defaults: the default profile's plugins,
// backoff 1 s to 10 s, pods left unschedulable flushed after 5 min), the
// scheduler's own informer factory (scheduler.NewInformerFactory: pods
// without Succeeded or Failed ones, managed fields stripped), scheduler.New
// with the options Setup passes, then what Run does without leader
// election: start the informers, wait for their caches and the handlers'
// initial events, and sched.Run. Its goroutines (the ScheduleOne loop,
// a binding cycle per pod, the queue's backoff and leftover flushes,
// asynchronous preemption) are upstream's, under the engine's call gate:
// every API call they make waits for the loop to release it.
//
// What is not upstream's main, and why:
//   - the client is built from the manager's rest.Config (the engine's
//     in-process transport): Setup takes a kubeconfig file, which cannot
//     carry a transport;
//   - no leader election (one replica; LeaderElect false), no configz,
//     no health or metrics servers;
//   - events go to the trace through the manager's recorder (as every
//     process's do) instead of an events.k8s.io broadcaster writing Event
//     objects;
//   - Parallelism 1 instead of 16: the default profile's filters then run
//     over the nodes in the node tree's order on one goroutine, so the
//     feasible list, and the first of equally scored nodes the scheduler
//     picks (no extenders: ties go to the earliest feasible node,
//     schedule_one.go), is the same in every run. With 16 workers the list
//     is filled in completion order, which the Go scheduler decides.
//
// Not modelled: a scheduling cycle takes no virtual time, so the queue is
// never busy when a backoff would matter (with SchedulerPopFromBackoffQ,
// on by default, an idle scheduler takes a backing-off pod at once); a
// scheduler held up under load is stood for by a lag of its views
// (staleness on its process). Its events (FailedScheduling, Scheduled,
// Preempted) reach the trace only while a step of its process runs, which
// never happens: the trace shows its writes (notes), not its events.
//
// Left to upstream's map iteration (not made deterministic here, caught by
// the run-twice check of any scenario it would change): preemption's choice
// among equally good candidate nodes (framework/preemption/preemption.go,
// candidates built from a map) and the order in which pods queued at the
// same instant are moved back to the active queue
// (backend/queue/scheduling_queue.go moveAllToActiveOrBackoffQueue).
package kubescheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/internal/listfirst"
)

// Name is the process name projects give the scheduler.
const Name = "kube-scheduler"

// podMaxInUnschedulablePodsDuration is kube-scheduler's default
// (options.go: the deprecated flag's default, 5 min).
const podMaxInUnschedulablePodsDuration = 5 * time.Minute

// init asks os/signal for a signal once, outside any bubble. scheduler.New
// starts the cache debugger, whose ListenForSignal calls signal.Notify
// (backend/cache/debugger/debugger.go): the first Notify in a program
// starts the runtime's signal-mask goroutine and makes its channels
// (runtime.ensureSigM), and made inside a synctest bubble they would belong
// to it, so the next run's Notify (another bubble) would be a fatal error.
// Made here, they belong to no bubble; the debugger's own channel is still
// its run's.
func init() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	signal.Stop(c)
}

// The scheduler's clientset is one its informers see as not taking
// watch-lists (package listfirst): the scheduling queue would otherwise
// receive the pods present at start, all at one instant, in Go's map
// order, and pop equally prioritised pods in that order.

// strictClock is the scheduling queue's clock (scheduler.WithClock; upstream's
// default is clock.RealClock, which is what this is but for one thing): no
// two readings are equal. The queue stamps a pod with the clock when it is
// added or re-added (backend/queue/scheduling_queue.go: Timestamp) and
// pops pods of equal priority oldest first (queuesort.PrioritySort). In a
// bubble the clock stands still between events, so pods re-added at one
// instant would tie, and the heap would pop them in the order they were
// inserted, which for pods moved back together is Go's map order
// (moveAllToActiveOrBackoffQueue ranges over a map). Production's clock
// moves between any two readings; here a reading equal to or before the
// last one is the last one plus a nanosecond, so stamps keep the order in
// which the queue handled the pods, as production's do.
type strictClock struct {
	clock.RealClock
	mu   sync.Mutex
	last time.Time
}

// Now implements clock.PassiveClock: the bubble's time, or a nanosecond
// after the previous reading when the bubble's time has not moved.
func (c *strictClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := time.Now()
	if !t.After(c.last) {
		t = c.last.Add(time.Nanosecond)
	}
	c.last = t
	return t
}

// NewTimer rounds d to the microsecond: the tie-break's nanoseconds must
// not move a timer (the backoff queue aligns its flush to whole seconds
// from a reading).
func (c *strictClock) NewTimer(d time.Duration) clock.Timer {
	return c.RealClock.NewTimer(d.Round(time.Microsecond))
}

// After rounds d to the microsecond, as NewTimer.
func (c *strictClock) After(d time.Duration) <-chan time.Time {
	return c.RealClock.After(d.Round(time.Microsecond))
}

// Since implements clock.PassiveClock with Now.
func (c *strictClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Immortal is what a project running the scheduler adds to its
// engine.Project.Immortal: the metrics recorders scheduler.New starts
// (metrics/metric_recorder.go run) look at their stop channel only between
// one-second sleeps, and a bubble's clock stops when its run ends, so one
// is still asleep then.
var Immortal = []string{"k8s.io/kubernetes/pkg/scheduler/metrics.(*MetricAsyncRecorder).run"}

// Setup adds kube-scheduler to mgr's process: a runnable that builds it
// and runs it until the process's context ends.
func Setup(ctx context.Context, mgr *ctrlsim.Manager) error {
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return run(ctx, mgr)
	}))
}

func run(ctx context.Context, mgr *ctrlsim.Manager) error {
	cfg, err := latest.Default()
	if err != nil {
		return fmt.Errorf("kube-scheduler: default configuration: %w", err)
	}
	cfg.LeaderElection.LeaderElect = false
	cfg.Parallelism = 1
	rc := mgr.GetConfig()
	rc.UserAgent = "kube-scheduler"
	// createKubeConfig (cmd/kube-scheduler/app/options/options.go): the
	// client's rate limits are the configuration's (50 QPS, burst 100);
	// client-go's limiter runs on the virtual clock.
	rc.QPS = cfg.ClientConnection.QPS
	rc.Burst = int(cfg.ClientConnection.Burst)
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kube-scheduler: client: %w", err)
	}
	factory := scheduler.NewInformerFactory(listfirst.Clientset{Interface: cs}, 0)
	recorders := profile.RecorderFactory(mgr.EventRecorderLogger)
	sched, err := scheduler.New(ctx, cs, factory, nil, recorders,
		scheduler.WithComponentConfigVersion(cfg.APIVersion),
		scheduler.WithKubeConfig(rc),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxInUnschedulablePodsDuration(podMaxInUnschedulablePodsDuration),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithClock(&strictClock{}),
	)
	if err != nil {
		return fmt.Errorf("kube-scheduler: %w", err)
	}
	// app.Run's startInformersAndWaitForSync.
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok && ctx.Err() == nil {
			return fmt.Errorf("kube-scheduler: informer for %v never synced", typ)
		}
	}
	// WaitForHandlersSync checks at once, then every 100 ms, whether the
	// handlers have heard the initial lists; the listeners deliver on
	// goroutines of their own, so whether the first check finds them done
	// would be the Go scheduler's choice. A sync point makes it the loop's:
	// released at a quiescent point, when every listener has delivered
	// what it had.
	mgr.SyncPoint("kube-scheduler: handlers synced?")
	if err := sched.WaitForHandlersSync(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("kube-scheduler: handlers not synced: %w", err)
	}
	sched.Run(ctx)
	factory.Shutdown()
	return nil
}
