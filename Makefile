# The two README commands are `make plan` (the main job) and `make test` (everything CI runs).
# Both start with `setup`, which is idempotent and takes seconds once the tools are built.
VENV := .venv
PY := $(VENV)/bin/python
# A project-local engine built by setup comes first on PATH; see tools/setup.sh.
export PATH := $(CURDIR)/.tools/pulumi/bin:$(PATH)

.PHONY: setup plan test lint unit engine

setup:
	@bash tools/setup.sh

plan: setup
	@$(PY) -c 'import gitops_infra; print("gitops-infra", gitops_infra.__doc__.strip().splitlines()[0])'
	@echo "plan: the offline plan (gitops-infra plan STACK) lands with issue 5; setup is complete."

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

test: setup lint
	$(PY) -m pytest
