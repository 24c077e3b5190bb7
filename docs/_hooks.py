"""MkDocs hooks of the docs site (``hooks:`` in mkdocs.yml).

The CLI's group loads its commands lazily, each module on first lookup, so that ``--help`` stays fast.
mkdocs-click lists a group's commands from ``group.commands`` when that is not empty, and only otherwise
asks ``list_commands``/``get_command``: had anything looked one command up before the CLI page is
rendered, the page would show that one alone. Looking every command up first makes the page whole
whatever ran before it.
"""

from __future__ import annotations

from typing import Any

import click


def _load_every_command(group: click.Group, context: click.Context) -> None:
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            _load_every_command(command, click.Context(command, parent=context, info_name=name))


def on_config(config: Any) -> Any:
    from gitops_infra.cli import main

    _load_every_command(main, click.Context(main, info_name="gitops-infra"))
    return config
