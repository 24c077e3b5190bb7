"""The offline plan (``plan``): a resource tree on a terminal, a table of counts and every resource's
inputs in Markdown."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .markdown import cell, code, details, escape, table

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from ... import automation

__all__ = ["plan_markdown", "print_plan"]

_KEY_INPUTS_SHOWN = 4
_VALUE_WIDTH = 48


# What a reviewer of a plan looks for first: who can reach the cluster's API.
_FIRST_INPUTS = ("endpointPublicAccess", "endpointPrivateAccess", "publicAccessCidrs")


def _resources(count: int) -> str:
    return f"{count} resource" if count == 1 else f"{count} resources"


def _key_inputs(inputs: Mapping[str, Any]) -> str:
    """A few scalar inputs (or short lists of them), enough to tell resources apart at a glance."""
    shown = []
    ordered = sorted(inputs.items(), key=lambda item: item[0] not in _FIRST_INPUTS)
    for key, value in ordered:
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        short_list = strings and 0 < len(value) <= 2
        if (short_list or isinstance(value, str | int | float | bool)) and key not in ("apiVersion", "kind"):
            text = json.dumps(value)
            shown.append(f"{key}={text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + '…'}")
        if len(shown) == _KEY_INPUTS_SHOWN:
            break
    return "  ".join(shown)


def print_plan(out: Console, result: automation.Plan) -> None:
    out.print(f"Offline plan of stack {result.stack} ({result.project}): {_resources(len(result.resources))}")
    out.print(result.note)
    if result.placeholders:
        out.print(f"Secrets planned with redacted placeholders: {', '.join(result.placeholders)}")
    children: dict[str | None, list[automation.PlannedResource]] = {}
    for resource in sorted(result.resources, key=lambda r: (r.type, r.name)):
        children.setdefault(resource.parent, []).append(resource)
    from rich.tree import Tree

    tree = Tree(f"pulumi:pulumi:Stack  {result.project}-{result.stack}")

    def add(branch: Tree, parent: str | None) -> None:
        for resource in children.get(parent, []):
            inputs = _key_inputs(resource.inputs)
            add(
                branch.add(f"{resource.type}  {resource.name}" + (f"  {inputs}" if inputs else "")),
                resource.urn,
            )

    add(tree, None)
    out.print(tree)
    out.print("Outputs:")
    for key, value in result.outputs.items():
        out.print(f"  {key}: {json.dumps(value)}")


def plan_markdown(result: automation.Plan) -> str:
    """A plan as Markdown: the note and the counts by type, then every resource and its inputs folded."""
    from ...automation.results.plan import NOTE

    by_type = Counter(r.type for r in result.resources)
    lines = [
        f"### Offline plan of {code(result.stack)}: {_resources(len(result.resources))} to create",
        "",
        escape(result.note) if result.note == NOTE else code(result.note),  # our prose, or any text
        "",
        *table(["type", "count"], sorted(by_type.items())),
    ]
    rows = [(code(r.type), r.name, cell(dict(r.inputs))) for r in result.resources]
    lines += details(_resources(len(result.resources)), table(["type", "name", "inputs"], rows))
    return "\n".join(lines) + "\n"
