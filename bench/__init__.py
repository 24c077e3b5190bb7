"""Benchmarks for gitops-infra: every figure is a ratio measured side by side in one run.

Run them all with ``.venv/bin/python -m bench`` (``--quick`` for a smoke run, ``--help`` for the
knobs). Three suites:

- ``engine``: ``gitops_infra.automation.preview`` / ``up`` (no-op) / ``detect_drift`` against the raw
  ``pulumi preview`` / ``pulumi up --yes --skip-preview`` / ``pulumi refresh --preview-only`` on the engine
  tests' dynamic-provider fixture, at several resource counts (target ratio <= 1.05);
- ``startup``: ``gitops-infra plan dev`` as a subprocess against a bare ``python -c "import pulumi_aws, ..."``
  (target ratio <= 1.5);
- ``scaling``: how ``offline_plan``'s time grows with the number of node groups and Flux health checks,
  with a least-squares line through the medians.

Each prints a table and everything lands in one JSON file (``bench/results/latest.json`` by default).
Benchmarks are not tests: nothing here asserts a timing.
"""
