"""``--format markdown``: the layout of each rendering, and what it must never let through."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gitops_infra.automation import (
    SECRET,
    Deployment,
    DriftedResource,
    DriftKind,
    DriftReport,
    FleetDrift,
    PreviewResult,
    PropertyDiff,
    StackDrift,
    StackError,
    StackLock,
    StackStatus,
    Step,
)
from gitops_infra.cli import to_markdown

URN = "urn:pulumi:dev::fixture::pulumi-python:dynamic:Resource::a"


def test_a_preview_is_a_count_table_then_the_steps_folded() -> None:
    preview = PreviewResult(
        stack="dev",
        changes={"create": 2, "update": 1, "same": 4},
        steps=(Step(urn=URN, op="update", type="t", keys=("content",)),),
    )
    assert to_markdown(preview) == (
        "### Preview of `dev`\n"
        "\n"
        "| operation | count |\n"
        "|---|---|\n"
        "| create | 2 |\n"
        "| same | 4 |\n"
        "| update | 1 |\n"
        "\n"
        "<details>\n"
        "<summary>1 steps</summary>\n"
        "\n"
        "| operation | resource | changed |\n"
        "|---|---|---|\n"
        f"| update | `{URN}` | content |\n"
        "\n"
        "</details>\n"
    )
    assert to_markdown(PreviewResult(stack="dev", changes={}, steps=())).endswith("No changes.\n")


def test_drift_shows_values_masked_escaped_and_cut() -> None:
    report = DriftReport(
        stack="dev",
        resources=(
            DriftedResource(
                urn=URN,
                type="t",
                kind=DriftKind.CHANGED,
                diffs=(
                    PropertyDiff(path="token", recorded=SECRET, actual=SECRET),
                    PropertyDiff(path="content", recorded="a|b", actual="<computed>"),
                    PropertyDiff(path="long", recorded="x" * 200, actual=None),
                ),
            ),
        ),
    )
    text = to_markdown(report)
    assert "| drift | count |\n|---|---|\n| changed | 1 |" in text
    assert f"| changed | `{URN}` | token | [secret] | [secret] |" in text
    assert "| content | a\\|b | &lt;computed&gt; |" in text  # a pipe ends no cell, a tag hides nothing
    assert "x" * 79 + "…" in text and "x" * 80 not in text
    assert to_markdown(DriftReport(stack="dev")).endswith("No drift.\n")


def test_fleet_drift_has_one_row_per_stack_and_the_details_of_the_others() -> None:
    drifted = DriftReport(
        stack="dev", resources=(DriftedResource(urn=URN, type="t", kind=DriftKind.DELETED),)
    )
    fleet = FleetDrift(
        stacks=(
            StackDrift(
                stack="broken", report=None, error=StackError("StackNotFoundError", "no stack 'broken'")
            ),
            StackDrift(stack="dev", report=drifted),
            StackDrift(stack="prod", report=DriftReport(stack="prod")),
        )
    )
    text = to_markdown(fleet)
    assert "| broken | error: StackNotFoundError |\n| dev | 1 drifted |\n| prod | no drift |" in text
    assert "**broken**: no stack 'broken'" in text and f"| deleted | `{URN}` |" in text


def test_status_is_a_row_per_stack() -> None:
    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    last = Deployment(1, "update", "succeeded", when, when, "deploy | now", "0123456789abcdef")
    statuses = (
        StackStatus("dev", last, at_head=True, locked=True, lock=StackLock("ci", "runner-1", 42)),
        StackStatus("prod", None, at_head=None, locked=False),
    )
    text = to_markdown(statuses)
    row = "| dev | v1 update succeeded | 2026-11-30T12:00:00+00:00 | 0123456789ab | yes | by ci@runner-1 pid"
    assert row in text
    assert "| prod | never deployed |  |  |  | no |" in text
    assert "- **dev**: deploy \\| now" in text
    assert to_markdown(statuses[0]).startswith("### Stack status")


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="no Markdown rendering for int"):
        to_markdown(3)
