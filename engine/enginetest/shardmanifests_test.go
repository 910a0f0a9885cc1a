package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestShardManifests: the GitHub Actions workflow and the Kubernetes
// Indexed Job that run make explore-all SHARD=i/n share the committed
// corpus out in n shards, and those shards hold every scenario exactly
// once.
func TestShardManifests(t *testing.T) {
	root := RepoRoot(t)
	read := func(rel string, into any) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Shard []int `json:"shard"`
				} `json:"matrix"`
			} `json:"strategy"`
			Env   map[string]string `json:"env"`
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	read(".github/workflows/explore-all.yml", &wf)
	job, ok := wf.Jobs["shard"]
	if !ok {
		t.Fatal(".github/workflows/explore-all.yml: no job 'shard'")
	}
	n, err := strconv.Atoi(job.Env["SHARDS"])
	if err != nil || n < 1 {
		t.Fatalf("the workflow's SHARDS %q: %v", job.Env["SHARDS"], err)
	}
	var want []int
	for i := range n {
		want = append(want, i)
	}
	if !slices.Equal(job.Strategy.Matrix.Shard, want) {
		t.Errorf("the workflow's matrix shards %v, want %v (SHARDS=%d)", job.Strategy.Matrix.Shard, want, n)
	}
	if !slices.ContainsFunc(job.Steps, func(s struct {
		Run string `json:"run"`
	}) bool {
		return s.Run == "make explore-all SHARD=${{ matrix.shard }}/${{ env.SHARDS }}"
	}) {
		t.Error("the workflow runs no 'make explore-all SHARD=${{ matrix.shard }}/${{ env.SHARDS }}'")
	}

	var kj struct {
		Spec struct {
			CompletionMode string `json:"completionMode"`
			Completions    int    `json:"completions"`
			Parallelism    int    `json:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string `json:"command"`
						Env     []struct {
							Name, Value string
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	read("deploy/explore-all-job.yaml", &kj)
	if kj.Spec.CompletionMode != "Indexed" || kj.Spec.Completions != n {
		t.Errorf("the Job: completionMode %q, completions %d; want Indexed, %d (the workflow's shards)", kj.Spec.CompletionMode, kj.Spec.Completions, n)
	}
	if len(kj.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the Job has %d containers, want 1", len(kj.Spec.Template.Spec.Containers))
	}
	c := kj.Spec.Template.Spec.Containers[0]
	if !strings.Contains(strings.Join(c.Command, " "), "make explore-all SHARD=${JOB_COMPLETION_INDEX}/${SHARDS}") ||
		!slices.Contains(c.Env, struct{ Name, Value string }{"SHARDS", strconv.Itoa(n)}) {
		t.Errorf("the Job's container runs %q with env %v; want make explore-all SHARD=${JOB_COMPLETION_INDEX}/${SHARDS}, SHARDS=%d", c.Command, c.Env, n)
	}

	all, err := AllScenarios(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no scenario in the corpus")
	}
	seen := map[string]int{}
	for k := range n {
		t.Setenv(EnvAllShard, fmt.Sprintf("%d/%d", k, n))
		kept, err := allShard(root, all)
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) == 0 {
			t.Errorf("shard %d/%d holds no scenario", k, n)
		}
		for _, p := range kept {
			seen[p]++
		}
	}
	for _, p := range all {
		if seen[p] != 1 {
			t.Errorf("%s is in %d of the %d shards, want 1", p, seen[p], n)
		}
	}
}
