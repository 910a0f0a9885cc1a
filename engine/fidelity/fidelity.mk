# Differential fidelity suite: the engine vs a real in-process kube-apiserver
# (k8s.io/kubernetes v1.36.3 + embedded etcd). Include from the top Makefile:
#   include engine/fidelity/fidelity.mk
# The suite is its own module, NOT in go.work (k8s.io/kubernetes would change
# the workspace's build list), so it is always built with GOWORK=off.
# Times: see engine/fidelity/README.md.

# Each run keeps its own log (a failing run's is never overwritten by the
# next: a flake's cause must survive it); fidelity.log points at the newest.
FIDELITY_LOG_DIR ?= $(CURDIR)/engine/fidelity/out
FIDELITY_REPORT ?= $(CURDIR)/engine/fidelity/out/fidelity-report.json
FIDELITY_GO = cd engine/fidelity && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"

.PHONY: fidelity fidelity-build fidelity-align fidelity-update-known fidelity-vacuity-discover

# Runs the suite, streams the case table, keeps the full -v log in a file of
# its own under $(FIDELITY_LOG_DIR) (named by time and process id; its path is
# printed on failure with the failing cases) and a JSON report of every
# observation in $(FIDELITY_REPORT); then checks the cases are not vacuous:
# each case naming a semantic (vacuity_test.go) must disagree with an engine
# that has it switched off.
# POSIX sh only (no pipefail): the exit status travels through a file.
fidelity:
	@mkdir -p $(FIDELITY_LOG_DIR) $(dir $(FIDELITY_REPORT)); \
	log=$(FIDELITY_LOG_DIR)/fidelity-$$(date -u +%Y%m%dT%H%M%SZ)-$$$$.log; rm -f $$log.status; \
	( $(FIDELITY_GO) FIDELITY_REPORT=$(FIDELITY_REPORT) FIDELITY_VACUITY=1 \
	    go test -vet=off -count=1 -timeout 30m -v -run 'TestFidelity$$' ./... 2>&1; \
	  echo $$? > $$log.status ) | tee $$log \
	  | grep -v -E '^=== (RUN|PAUSE|CONT)|^ +--- PASS'; \
	ln -sf $$(basename $$log) $(FIDELITY_LOG_DIR)/fidelity.log; \
	status=$$(cat $$log.status); rm -f $$log.status; \
	if [ "$$status" != "0" ]; then \
	  cases=$$(grep -o -E -e '--- FAIL: TestFidelity/[^ ]+' $$log | sed 's/--- FAIL: TestFidelity\///' | tr '\n' ' '); \
	  echo "FIDELITY FAILED (go test exit $$status); failing cases: $${cases:-none named (see the log)}; full log: $$log" >&2; exit 1; \
	fi; echo "fidelity: PASS (log: $$log)"

# Compile only: warms the build cache (the cold compile takes many minutes).
# The suite's go test runs with -vet=off and is not vetted: go vet analyses
# every dependency of what it vets: here it would type-check the 809
# packages of kube-apiserver's registries and etcd's server that only the
# suite has once more, for the suite's own test files (make test and make
# lint vet the engine's packages).
fidelity-build:
	$(FIDELITY_GO) go test -vet=off -count=1 -run 'XXX_NONE' ./...

# Moves every library the suite shares with the workspace to the workspace's
# version (engine/cmd/align; make lint checks it): the engine under test is
# then the corpus's, and the suite's build shares the workspace's compiled
# packages. Run it after a change to any project's go.mod.
fidelity-align:
	cd engine && go run ./cmd/align -root .. -dir engine/fidelity

# Rewrites testdata/pinned/*.json, the pins of knownDifferences and reportedBugs.
fidelity-update-known:
	$(FIDELITY_GO) FIDELITY_UPDATE=1 go test -vet=off -count=1 -timeout 30m -run 'TestFidelity$$' ./...

# Prints, per ablation, every case that disagrees with the real server when
# the engine has that semantic switched off: what cases could name.
fidelity-vacuity-discover:
	$(FIDELITY_GO) FIDELITY_VACUITY=discover go test -vet=off -v -count=1 -timeout 30m -run 'TestFidelity$$' ./... | grep '^vacuity'
