# ctrlbugs: a corpus of real bugs in real Kubernetes controllers.
#
#   make reproduce FINDING=fluxcd-f1   replay one finding on the pinned upstream
#   make test                          unit tests, smoke tests, every scenario's reference run twice, every finding's recorded trace replayed
#   make explore-all [SHARD=i/n] [UPDATE=1]   every scenario's search in full against the digest
#   make verify [ALSO=run]             every finding, its control and also runs (from the digest; ALSO=run: afresh); the index
#   make fidelity                      the engine against a real kube-apiserver
#   make lint                          golangci-lint over the engine
#   make record FINDING=id             (re)record a finding's trace
#   make record-release FINDING=id     (re)record its traces on the other releases it lists
#   make judge TRACE=file              judge a stored trace again from its records
#   make render TRACE=file [FROM=n] [TO=m] [STORY=n] [MERMAID=1] [SUMMARY=1]   a stored trace as a timeline or diagram
#   make bump PROJECT=fluxcd VERSION=v1.8.0   move a pin and re-check findings
#   make bump-revert PROJECT=fluxcd    put a project's go.mod and go.sum back as committed
#   make bump-check [PROJECT=fluxcd]   bump to newer served releases in scratch copies
#   make engine-crcheck [CR=v] [KUBE=v]   the engine's tests on its pins and on the newest served controller-runtime v0.25.x (+ Kubernetes 1.37) in a scratch copy
#   make explore SCENARIO=scenarios/fluxcd/x.json [SEED=n] [SHARD=i/n] [TRACES=all] [RELEASE=v…]   explore one scenario (on another release releases.json lists)
#   make mermaid-check                 render every finding's timeline with the real Mermaid
#   make findings-index                regenerate BUG-FINDINGS.md
#   make migrate-scenarios [SCENARIO=path]   rewrite scenario files (default scenarios/*/*.json; a file or directory) into scenario schema v1
#   make inspect FINDING=fluxcd-f2 [STEP=n] [PORT=n] | TRACE=file   serve a step of a trace to kubectl (read-only API server)
#   make kubectl                       build kubectl at the engine's version into out/tools (for make inspect)
#   make test-engine | test-projects   the two halves of make test
#   make prefetch                      download what CI's steps fetch (modules, golangci-lint, chromium, mermaid-cli)
#   make fidelity-build                compile the fidelity suite only (warm the build cache)
#   make fidelity-align                move the fidelity suite's libraries to the workspace's versions
#   make fidelity-update-known         rewrite the pins of the fidelity suite's known differences
#   make fidelity-vacuity-discover     print, per ablation, every fidelity case that disagrees with it off
#   make help                          this list

SHELL := /bin/bash

# The first target: make alone prints the list above.
help:
	@sed -n '3,/^$$/p' $(firstword $(MAKEFILE_LIST)) | sed -n 's/^#   //p'
.SHELLFLAGS := -o pipefail -c

# Some pinned upstreams need a newer Go than the machine's; GOTOOLCHAIN=auto
# lets the go command fetch the toolchain go.work/go.mod name, through the
# module proxy. Nothing is installed by hand.
export GOTOOLCHAIN := auto

PROJECTS := $(notdir $(wildcard projects/*))
# go test -v noise: keep our own lines and failures. Braced so that only
# grep's own "no line left" status is ignored: under pipefail the test
# binary's failure is still the pipeline's (`a | grep || true` would be
# `(a | grep) || true`, which passed every failure).
QUIET := { grep -v -E '^(=== (RUN|PAUSE|CONT)|[[:space:]]*--- PASS|PASS$$|ok  )' || true; }

# A project's test binary, rebuilt only when one of its inputs changed
# (.ci/testbin says how it knows without asking the go command, which
# takes seconds to find a binary up to date).
# Run it from the project directory: $(call testbin,fluxcd) -test.run X
# Each run's scratch directory (explore.RunDir: fluxcd's artifact storage)
# goes to memory when the machine has a writable /dev/shm and TMPDIR is not
# set: a run creates and removes it, ~7 % of a fluxcd finding's check on a
# disk.
RUNTMP := $(or $(TMPDIR),$(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm),/tmp)
testbin = (.ci/testbin $(1) && cd projects/$(1) && TMPDIR=$(RUNTMP) ../../out/$(1).test -test.count=1 -test.v $(2))

.PHONY: help lint test test-engine test-projects explore-all reproduce verify record record-release judge render explore bump bump-revert bump-check engine-crcheck findings-index migrate-scenarios check-finding mermaid-check prefetch

test: test-engine test-projects

# go vet runs every analyzer; go test's own vet (a subset) would analyse
# every dependency again under another cache key, so it is off.
# The inspect package's tests drive the real kubectl (make kubectl); here a
# missing one fails them instead of skipping them.
# etcdkv is served to kube's storage from several goroutines (watches,
# lease expiry), and ctrlsim and explore run client-go's informers and
# upstream's goroutines beside the engine's loop (controller-runtime's own
# cache): their tests run under the race detector too.
test-engine: kubectl
	cd engine && go vet ./... && CTRLBUGS_REQUIRE_KUBECTL=1 go test -vet=off -count=1 ./... && go test -vet=off -count=1 -race . ./etcdkv/ ./ctrlsim/ ./explore/

# The projects' tests run TestScenarios in its reference tier (the default
# of CTRLBUGS_TIER): each scenario's reference run twice; the full searches
# are explore-all's. TestFindings replays each finding's recorded trace
# (CTRLBUGS_MODE=replay); its variants, control and also runs are make
# verify's.
# The project's own package runs from its test binary (.ci/testbin: the one
# make verify, reproduce and explore-all run, linked once); its other
# packages (fluxcd's s3stub) through go test.
test-projects:
	@for p in $(PROJECTS); do \
	  echo "== projects/$$p"; \
	  (cd projects/$$p && go vet ./...) || exit 1; \
	  t0=$$SECONDS; out=$$(mktemp); \
	  (export CTRLBUGS_TIER=reference CTRLBUGS_MODE=replay; $(call testbin,$$p,-test.timeout 30m)) > $$out 2>&1 \
	    || { grep -v -E '^(=== (RUN|PAUSE|CONT)|[[:space:]]*--- PASS)' $$out; rm -f $$out; echo "FAIL	projects/$$p" >&2; exit 1; }; \
	  rm -f $$out; echo "ok  	projects/$$p	$$((SECONDS - t0))s"; \
	  rest=$$(cd projects/$$p && go list ./... | grep -v -x -F "$$(go list .)" || true); \
	  if [ -n "$$rest" ]; then (cd projects/$$p && go test -vet=off -count=1 $$rest) || exit 1; fi; \
	done

# Every committed scenario's search in full, compared with the committed
# digest of their verdicts (scenarios/<project>.digest.json); SHARD=i/n runs
# one share of the scenarios, UPDATE=1 rewrites the digest and prints what
# changed, JOBS=n the number of shards run in parallel here (default: one
# per CPU). See .ci/explore-all.
explore-all:
	@SHARD='$(SHARD)' UPDATE='$(UPDATE)' JOBS='$(JOBS)' .ci/explore-all

check-finding:
	@test -n "$(FINDING)" || { echo "usage: make $(MAKECMDGOALS) FINDING=<project>-<n> (e.g. fluxcd-f1)" >&2; exit 2; }
	@test -f findings/$(firstword $(subst -, ,$(FINDING)))/$(FINDING).md || { echo "no finding $(FINDING): expected findings/$(firstword $(subst -, ,$(FINDING)))/$(FINDING).md" >&2; exit 2; }

# Replays the finding's recorded trace on the pinned upstream, evaluates its
# oracle, prints the timeline and one verdict line; exit 1 on any mismatch.
# Upstream's own log lines (klog's header: a severity letter, the date,
# the time, the thread id, file:line]) go to a file, counted on one line
# after the verdict: upstream logs to stderr, unbuffered, so they would
# otherwise come before the timeline they belong to.
UPSTREAM_LOG = awk -v f="$(1)" '/^[IWEF][0-9][0-9][0-9][0-9] [0-9:.]+ +[0-9]+ [^ ]+:[0-9]+\] / { print > f; n++; if ($$0 ~ /^[EF]/) e++; next } { print } END { if (n) printf "upstream log: %d lines (%d errors) in %s\n", n, e + 0, f }'

reproduce: check-finding
	@p=$(firstword $(subst -, ,$(FINDING))); \
	out=$$(mktemp); \
	mkdir -p out/reproduce; rm -f out/reproduce/$(FINDING).upstream.log; \
	(export CTRLBUGS_MODE=reproduce; $(call testbin,$$p,-test.run 'TestFindings/$(FINDING)$$') 2>&1) | tee $$out | $(call UPSTREAM_LOG,out/reproduce/$(FINDING).upstream.log) | $(QUIET); \
	grep -q -E '^$(FINDING): [A-Z-]+ as recorded trace=sha256:' $$out || { grep -q -E '^$(FINDING): ' $$out || echo "$(FINDING): no verdict line (see the output above)" >&2; rm -f $$out; exit 1; }; \
	rm -f $$out

# Runs one scenario file in its search mode (optionally another seed, one
# shard i/n of the search): a line per run with its verdicts, a summary, and
# the first failing run's trace under out/explore/ with how to render it.
explore:
	@test -n "$(SCENARIO)" -a -f "$(SCENARIO)" || { echo "usage: make explore SCENARIO=scenarios/<project>/<name>.json [SEED=n] [SHARD=i/n] [RELEASE=v…] (file '$(SCENARIO)' not found)" >&2; exit 2; }
	@p=$$(basename $$(dirname $(SCENARIO))); \
	test -d projects/$$p || p=$$(basename $$(dirname $$(dirname $(SCENARIO)))); \
	test -d projects/$$p || { echo "no project for $(SCENARIO): expected scenarios/<project>/ (or a folder in it), with projects/<project>" >&2; exit 2; }; \
	mkdir -p out; \
	if [ -n "$(RELEASE)" ]; then \
	  (export CTRLBUGS_SEED=$(SEED) CTRLBUGS_SHARD=$(SHARD) CTRLBUGS_TRACES=$(TRACES); \
	    cd engine && go run ./cmd/release-verify -root .. -scenario $(abspath $(SCENARIO)) -release '$(RELEASE)' 2>&1) | $(QUIET); \
	  exit; \
	fi; \
	(export CTRLBUGS_SCENARIO=$(abspath $(SCENARIO)) CTRLBUGS_SEED=$(SEED) CTRLBUGS_SHARD=$(SHARD) CTRLBUGS_TRACES=$(TRACES); \
	  $(call testbin,$$p,-test.run 'TestScenarios$$') 2>&1) | $(QUIET)

record: check-finding
	@p=$(firstword $(subst -, ,$(FINDING))); \
	mkdir -p out; (export CTRLBUGS_MODE=record; $(call testbin,$$p,-test.run 'TestFindings/$(FINDING)$$') 2>&1) | $(QUIET)

# Records a finding's traces on the other releases it lists (front matter
# releases:), each in a scratch build of the project at that release.
record-release: check-finding
	cd engine && go run ./cmd/release-verify -root .. -record -finding $(FINDING)

# Every finding: replay + control run, one line each; each finding that
# lists other releases of its upstream, on each of them (release-verify:
# a scratch build per project release, projects/<p>/releases.json); then
# the index check.
verify:
	@fail=0; for p in $(PROJECTS); do \
	  out=$$(mktemp); \
	  mkdir -p out; (export CTRLBUGS_MODE=verify CTRLBUGS_ALSO='$(ALSO)'; $(call testbin,$$p,-test.run 'TestFindings') 2>&1) > $$out || fail=1; \
	  grep -E '^[a-z0-9]+-[a-z0-9]+ [A-Z]' $$out || true; \
	  if [ $$fail = 1 ]; then grep -v -E '^(=== RUN|--- PASS)' $$out >&2; fi; \
	  rm -f $$out; \
	done; \
	(cd engine && go run ./cmd/release-verify -root ..) || fail=1; \
	(cd engine && go run ./cmd/trace-judge $(addprefix ../,$(wildcard findings/*/*.trace.jsonl)) >/dev/null && echo "every recorded verdict follows from its trace's records (trace-judge)") || fail=1; \
	cd engine && go run ./cmd/findings-index -root .. -check || fail=1; \
	if [ $$fail = 1 ]; then echo "verify: FAILED" >&2; exit 1; fi; echo "verify: all findings as recorded"

# Renders a stored trace (a finding's, or a run make explore kept) as a
# timeline: the whole of it, FROM=n TO=m a stretch, STORY=n the steps
# around every action, note and first failure (what make reproduce prints),
# MERMAID=1 a Mermaid sequence diagram (from FROM).
render:
	@test -n "$(TRACE)" -a -f "$(TRACE)" || { echo "usage: make render TRACE=findings/<project>/<id>.trace.jsonl [FROM=n] [TO=m] [STORY=n] [MERMAID=1] [SUMMARY=1] (MERMAID=1 STORY=n: the story as a diagram; SUMMARY=1: a diagram of the writes only) (file '$(TRACE)' not found)" >&2; exit 2; }
	@cd engine && go run ./cmd/trace-render $(if $(MERMAID),-mermaid) $(if $(SUMMARY),-mermaid -summary) $(if $(FROM),-from $(FROM)) $(if $(TO),-to $(TO)) $(if $(STORY),-story $(STORY)) $(abspath $(TRACE))

# Judges a stored trace again, offline, from the records it keeps.
judge:
	@test -n "$(TRACE)" || { echo "usage: make judge TRACE=findings/<project>/<id>.trace.jsonl" >&2; exit 2; }
	@cd engine && go run ./cmd/trace-judge $(abspath $(TRACE))

# golangci-lint (installed into out/tools at a pinned version on first use)
# over the engine with the repository's .golangci.yml.
GOLANGCI_LINT_VERSION = v2.7.2
lint:
	@test -x out/tools/golangci-lint || { mkdir -p out/tools && GOBIN=$(CURDIR)/out/tools go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); }
	cd engine && ../out/tools/golangci-lint run --config ../.golangci.yml ./...
	@# Every project's go.mod/go.sum tidy (make bump runs tidy; it once broke
	@# unnoticed). The engine's go.mod is not checked: it pins k8s.io staging
	@# modules that k8s.io/kubernetes requires at v0.0.0, which tidy drops.
	@for p in $(PROJECTS); do (cd projects/$$p && go mod tidy -diff) || { echo "projects/$$p: go.mod/go.sum not tidy (diff above): run go mod tidy there" >&2; exit 1; }; done
	@# The fidelity suite's module on the workspace's build list (make fidelity-align).
	@cd engine && go run ./cmd/align -root .. -dir engine/fidelity -check

# Renders every finding's Mermaid timeline with the Mermaid library that
# mermaid-cli installs, in Debian's chromium (both installed on first use; one
# browser renders every diagram, .ci/mermaid-render.mjs) and fails on a parse error or an
# empty or dropped note; it checks itself on a known-bad diagram first.
mermaid-check:
	@.ci/mermaid-check

# Downloads what CI's steps fetch (every module's dependencies, golangci-lint's
# sources, the Mermaid check's chromium and mermaid-cli) without compiling:
# .ci/run starts it beside make test, whose compiling would otherwise wait on
# each download in turn.
prefetch:
	@# go list loads every package the tests build, which fetches exactly the
	@# modules that provide them (go mod download would fetch the whole module
	@# graph, versions the registry does not serve included).
	@for m in engine $(addprefix projects/,$(PROJECTS)); do (cd $$m && go list -deps -test ./... >/dev/null) || exit 1; done
	@$(FIDELITY_GO) go list -deps -test ./... >/dev/null
	@test -x out/tools/golangci-lint || GOBIN=$(CURDIR)/out/tools go install -n github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) 2>/dev/null
	@.ci/mermaid-check --install

findings-index:
	cd engine && go run ./cmd/findings-index -root ..

# Rewrites scenario files written before scenario schema v1 into v1
# (engine/cmd/scenario-migrate): "apiVersion": "ctrlbugs.dev/v1" and
# "kind": "Scenario" first, each "group/version/Kind" string as apiVersion
# and kind. In place, one line per file changed; a v1 file is left alone.
migrate-scenarios:
	@cd engine && go run ./cmd/scenario-migrate -root .. $(or $(SCENARIO),$(wildcard scenarios/*/*.json))

# Moves a project's pin (MODULE defaults to the project's upstream, the first
# line of projects/<name>/UPSTREAM; any module of its build list may be moved,
# e.g. the library that holds the buggy code) and, with the upstream, the
# sibling modules UPSTREAM's other lines declare, to the versions the new
# release's go.mod requires (engine/cmd/bump-pin: one go get, tidy, then a
# check that each moved module is where it was sent; "modules not aligned"
# names the module and versions where that cannot be done; a sibling the
# release's go.mod does not require is dropped, as are the "drop" modules of
# the project's releases.json entry for VERSION, whose "files" are put in
# place; everything changed is saved first for bump-revert). Then it rebuilds
# and vets the harness (failure: "harness broken"), re-runs every finding of
# the project afresh (not by replay: a new upstream may legitimately take
# other steps) and reports per finding: still reproduces / no longer
# reproduces (candidate fixed-upstream) / harness broken. The new pin stays
# for review.
bump:
	@test -n "$(PROJECT)" -a -n "$(VERSION)" || { echo "usage: make bump PROJECT=fluxcd VERSION=v1.8.0 [MODULE=path]" >&2; exit 2; }
	@mkdir -p out && (cd engine && go build -o ../out/bump-pin ./cmd/bump-pin) || { echo "make bump: building engine/cmd/bump-pin failed" >&2; exit 2; }
	@mod=$${MODULE:-$$(sed -n 1p projects/$(PROJECT)/UPSTREAM)}; \
	out/bump-pin -project '$(PROJECT)' -version '$(VERSION)' -module "$$mod"; rc=$$?; \
	case $$rc in 0|1) ;; 3) exit 1 ;; *) exit $$rc ;; esac; \
	{ test $$rc -eq 0 && cd projects/$(PROJECT) && go build ./... && go vet ./...; } \
	  || { echo "$(PROJECT): harness broken at $$mod@$(VERSION) (dependency resolution or build; see above)"; exit 1; }; \
	log=$$(mktemp); CTRLBUGS_MODE=bump go test -count=1 -run 'TestFindings' -v . > $$log 2>&1; trc=$$?; \
	grep -E '^[a-z0-9]+-[a-z0-9]+: ' $$log; \
	if [ $$trc -ne 0 ]; then \
	  grep -v -E '^(=== (RUN|PAUSE|CONT)|[[:space:]]*--- PASS)' $$log | grep -v -E '^[a-z0-9]+-[a-z0-9]+: ' | tail -40 >&2; rm -f $$log; \
	  echo "$(PROJECT): the findings' runs at $$mod@$(VERSION) failed (go test exit $$trc: a harness break, a panic or a run error; see above). The pin is moved: review it, then make bump-revert PROJECT=$(PROJECT)" >&2; exit 1; \
	fi; rm -f $$log; \
	echo "pin moved; review git diff projects/$(PROJECT)/go.mod, then re-record (make record) or revert (make bump-revert PROJECT=$(PROJECT))"

# Goes back after a bump: puts back every file make bump changed, as it was
# before the first bump from the current commit (bump-pin saves them in
# out/bump/<name>/ before changing any: projects/<name>/go.mod and go.sum,
# go.work and go.work.sum, and the harness files a releases.json entry put
# in place), and says which. With no such snapshot (none made, or made at
# another commit) it puts projects/<name>/go.mod and go.sum back as
# committed (git checkout -- both files) and says so.
bump-revert:
	@test -n "$(PROJECT)" -a -d "projects/$(PROJECT)" || { echo "usage: make bump-revert PROJECT=fluxcd" >&2; exit 2; }
	@mkdir -p out && (cd engine && go build -o ../out/bump-pin ./cmd/bump-pin) || { echo "make bump-revert: building engine/cmd/bump-pin failed" >&2; exit 2; }
	@out/bump-pin -project '$(PROJECT)' -revert; rc=$$?; \
	case $$rc in 0) ;; 4) git checkout -- projects/$(PROJECT)/go.mod projects/$(PROJECT)/go.sum && \
	  echo "$(PROJECT): go.mod and go.sum are back as committed (git checkout -- projects/$(PROJECT)/go.mod projects/$(PROJECT)/go.sum)" ;; \
	  *) exit $$rc ;; esac

# Runs bump for newer releases of each project's upstream, each in a scratch
# copy under the temporary directory (this tree is not changed), and reports
# per finding and version; exit non-zero only if the tooling fails. Options:
# PROJECT=name, MODULE=path (as for bump), VERSIONS="v1 v2" (instead of the
# newer served releases), MAX=n newest (default 3, 0: all), PRE=1 (include
# pre-releases). Logs: out/bump-check/.
bump-check:
	@cd engine && go run ./cmd/bump-check -root .. -project '$(PROJECT)' -module '$(MODULE)' \
	  -versions '$(VERSIONS)' -max '$(or $(MAX),3)' -pre='$(or $(PRE),false)'

# The engine on two controller-runtime lines (engine/cmd/crcheck): its pins,
# as test-engine (go vet, go test on the workspace), then the newest served
# controller-runtime v0.25.x with k8s.io/kubernetes at the newest served
# patch of the minor it requires (v1.37.x) and every k8s.io staging module
# the engine pins at the matching v0.37.x, in a scratch copy of engine/
# (out/crcheck/, GOWORK=off): go get, go mod tidy, go build, go vet, go test.
# Prints the versions each line resolved to; a failure ends it with
# "engine-crcheck: FAILED: <line>: <step>: <why>". CR=v0.25.1 / KUBE=v1.37.0:
# those versions instead of the newest served.
engine-crcheck:
	@cd engine && go run ./cmd/crcheck -root .. -cr '$(CR)' -kube '$(KUBE)'

# Replays a finding's recorded trace (or TRACE=file: any run of one of the
# projects' scenarios, e.g. an exploration's failing run under out/explore/;
# PROJECT=p when its scenario's name is not found) up to STEP (default: the
# last step; 0: before the first) and serves that state on 127.0.0.1:PORT
# (default: a free port) as a read-only Kubernetes API server, until Ctrl-C.
# It writes out/inspect/<id>.kubeconfig and prints the export line; POST
# /ctrlbugs/step?n=<step> (or a step number typed here) moves it (README,
# "A finding's cluster, live"). The test binary runs without its timeout.
.PHONY: inspect kubectl
inspect:
	@if [ -n "$(TRACE)" ]; then \
	  test -f "$(TRACE)" || { echo "TRACE=$(TRACE): no such file" >&2; exit 2; }; \
	  p='$(PROJECT)'; sc=$$(head -c 4096 "$(TRACE)" | sed -n '1s/.*"scenario":"\([^"]*\)".*/\1/p'); \
	  test -n "$$p" || p=$$(ls scenarios/*/"$$sc.json" 2>/dev/null | head -1 | cut -d/ -f2); \
	  test -n "$$p" || p=$$(grep -l -E "^[[:space:]]*\"name\": *\"$$sc\"" scenarios/*/*.json 2>/dev/null | head -1 | cut -d/ -f2); \
	  test -n "$$p" -a -d "projects/$$p" || { echo "TRACE=$(TRACE): no project's scenarios name its scenario \"$$sc\" (pass PROJECT=<project>)" >&2; exit 2; }; \
	  env="CTRLBUGS_INSPECT_TRACE=$(abspath $(TRACE))"; \
	elif [ -n "$(FINDING)" ]; then \
	  p=$(firstword $(subst -, ,$(FINDING))); \
	  test -f findings/$$p/$(FINDING).md || { echo "no finding $(FINDING): expected findings/$$p/$(FINDING).md" >&2; exit 2; }; \
	  env="CTRLBUGS_INSPECT_FINDING=$(FINDING)"; \
	else echo "usage: make inspect FINDING=<project>-<n> [STEP=n] [PORT=n]  or  make inspect TRACE=<file> [PROJECT=p] [STEP=n] [PORT=n]" >&2; exit 2; fi; \
	mkdir -p out/inspect; export $$env CTRLBUGS_MODE=inspect CTRLBUGS_INSPECT_STEP='$(STEP)' CTRLBUGS_INSPECT_PORT='$(PORT)'; \
	$(call testbin,$$p,-test.run 'TestFindings$$' -test.timeout 0) 2>&1 | grep --line-buffered -v -E '^(=== RUN|--- (PASS|FAIL)|PASS$$|FAIL$$|ok  |exit status)'

# kubectl itself, built from k8s.io/kubectl at the version the engine links
# (engine/inspect/kubectl, its own module), into out/tools/kubectl.
kubectl: out/tools/kubectl
# Its version is stamped as kube's release build stamps it (-X on
# component-base/version and client-go/pkg/version), from the k8s.io/kubectl v0.x.y it requires
# (= Kubernetes v1.x.y): an unstamped build says "v0.0.0-master+$$Format:%H$$",
# which `kubectl version` cannot parse.
KUBECTL_MOD_VERSION = $(shell sed -n 's/^[[:space:]]*k8s.io\/kubectl v0\.\([0-9]*\)\.\([0-9]*\)$$/\1 \2/p' engine/inspect/kubectl/go.mod)
KUBECTL_LDFLAGS = $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,$(foreach kv,gitMajor=1 gitMinor=$(word 1,$(KUBECTL_MOD_VERSION)) gitVersion=v1.$(word 1,$(KUBECTL_MOD_VERSION)).$(word 2,$(KUBECTL_MOD_VERSION)) gitTreeState=clean,-X $(pkg).$(kv)))
out/tools/kubectl: engine/inspect/kubectl/go.mod engine/inspect/kubectl/main.go Makefile
	@test -n "$(KUBECTL_MOD_VERSION)" || { echo "kubectl: no k8s.io/kubectl v0.x.y in engine/inspect/kubectl/go.mod" >&2; exit 1; }
	@mkdir -p out/tools && echo "kubectl: building k8s.io/kubectl v0.$(word 1,$(KUBECTL_MOD_VERSION)).$(word 2,$(KUBECTL_MOD_VERSION)) into out/tools/kubectl (a few minutes the first time)" >&2
	@cd engine/inspect/kubectl && GOWORK=off go build -ldflags '$(KUBECTL_LDFLAGS)' -o ../../../out/tools/kubectl .

-include engine/fidelity/fidelity.mk
