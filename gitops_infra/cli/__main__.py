"""``python -m gitops_infra.cli``: the ``gitops-infra`` command."""

from gitops_infra.cli import main

main()
