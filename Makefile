# The two README commands are `make plan` (the main job) and `make test` (everything CI runs).
# CONTRIBUTING.md says what each target runs, and how long it takes.
# Both start with `setup`, which is idempotent and takes seconds once the tools are built.
VENV := .venv
PY := $(VENV)/bin/python
# A project-local engine built by setup comes first on PATH; see tools/setup.sh.
export PATH := $(CURDIR)/.tools/pulumi/bin:$(PATH)

.PHONY: setup plan test test-tiers test-lane-cluster test-lane-cluster-core test-lane-cluster-extras test-lane-engine test-floor lint docs bench demo demo-down

setup:
	@bash tools/setup.sh

# The main job: the offline plan of every stack (no engine, cloud, credentials or passphrase needed).
plan:
	@bash tools/setup.sh python
	@for stack in dev prod; do $(VENV)/bin/gitops-infra plan $$stack || exit 1; echo; done

# The docs site too: --strict makes any warning (a broken link or anchor, a reference that does not
# resolve, a snippet file that is gone) fail the build. It is written to build/site (git-ignored).
# NO_MKDOCS_2_WARNING keeps out the notice of its end of life that Material for MkDocs prints on every
# build (docs/upstream-notes.md).
lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	.tools/actionlint/bin/actionlint examples/ci/gitops-infra.yml examples/ci/fleet-drift.yml
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# Serves the docs site on http://127.0.0.1:8000, rebuilt as you edit (docs/, mkdocs.yml, the docstrings).
docs:
	@bash tools/setup.sh python
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --watch gitops_infra

# Setup, lint and the three lanes below, with the local cluster's toolchain built beside the lanes that
# do not need it (tools/test.sh says how); records how long it took in .tools/make-test.json, which the
# bench reports.
test:
	@MAKE="$(MAKE)" bash tools/test.sh

# The tiers run in three lanes side by side, each pytest run listing its slowest tests: the cluster tier
# (mostly waiting on Flux and the API server), the unit tier on the lowest pulumi, and the engine,
# install and unit tiers on two processes (pytest-xdist; each all computing), so that on 2 cores no core
# waits while the cluster tier does (CONTRIBUTING.md has the times). The floor's units ran after the cluster
# tier, which they made the longest lane by their 1.5 minutes. Each file runs on one process, so a
# module-scoped fixture (the install tier's wheel) is made once: xdist's loadgroup would say so per test,
# but with pytest 9 its groups are silently ignored. -O prints each lane's report whole when it ends.
# (make test runs the lanes through tools/test.sh, which starts the cluster lane once its toolchain is
# built; this target runs them all at once, on a toolchain built already.)
test-tiers:
	@$(MAKE) --no-print-directory -j3 -O test-lane-cluster test-lane-engine test-floor

test-lane-cluster:
	$(PY) -m pytest tests/cluster --durations=20

# The cluster tier in two parts, as tools/test.sh runs them: the tests of what every local cluster runs,
# and those of what only some start on request (marker `extra`: External Secrets, the Flux Operator, the
# registry, Sealed Secrets, Argo CD), which need the toolchain's extras built.
test-lane-cluster-core:
	$(PY) -m pytest tests/cluster -m "not extra" --durations=20

test-lane-cluster-extras:
	$(PY) -m pytest tests/cluster -m extra --durations=20

test-lane-engine:
	$(PY) -m pytest tests/engine tests/install tests/unit -n 2 --dist loadfile --durations=30

# The unit tests (mocks, offline plan) on the lowest pulumi pyproject.toml allows: the floor is tested.
test-floor:
	.venv-floor/bin/python -m pytest tests/unit -q -p no:cacheprovider

# Benchmarks (not tests): ratios against the raw pulumi CLI, measured side by side; see bench/README.md.
bench: setup
	$(PY) -m bench

# See the whole loop on your laptop: a local cluster, Flux and an SSH fleet repository
# (docs/local-cluster.md).
demo: setup
	@$(VENV)/bin/gitops-infra local up

# Stops exactly what `make demo` started, and removes .demo/.
demo-down:
	@$(VENV)/bin/gitops-infra local down
