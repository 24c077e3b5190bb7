"""``--format markdown``: the layout of each rendering, and what it must never let through."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitops_infra.automation import (
    SECRET,
    Deployment,
    DestroyPreview,
    DestroyResult,
    DrainResult,
    DriftedResource,
    DriftKind,
    DriftReport,
    FleetDrift,
    FleetPreview,
    KubeObject,
    Orphan,
    PreviewResult,
    PropertyDiff,
    StackDrift,
    StackError,
    StackLock,
    StackPreview,
    StackStatus,
    Step,
    SweepResult,
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
        f"| update | `{URN}` | `content` |\n"
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
                    PropertyDiff(path="long", recorded="x" * 300, actual=None),
                ),
            ),
        ),
    )
    text = to_markdown(report)
    assert "| drift | count |\n|---|---|\n| changed | 1 |" in text
    assert f"| changed | `{URN}` | `token` | `[secret]` | `[secret]` |" in text
    assert "| `content` | `a\\|b` | `<computed>` |" in text  # a pipe ends no cell, a tag is code
    assert "x" * 199 + "…" in text and "x" * 200 not in text
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
    assert "| `broken` | error: StackNotFoundError |\n| `dev` | 1 drifted |\n| `prod` | no drift |" in text
    assert "`broken`: `no stack 'broken'`" in text and f"| deleted | `{URN}` |" in text


def test_status_is_a_row_per_stack() -> None:
    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    last = Deployment(1, "update", "succeeded", when, when, "deploy | now", "0123456789abcdef")
    statuses = (
        StackStatus("dev", last, at_head=True, locked=True, lock=StackLock("ci", "runner-1", 42)),
        StackStatus("prod", None, at_head=None, locked=False),
    )
    text = to_markdown(statuses)
    row = "| `dev` | `v1 update succeeded` | `2026-11-30T12:00:00+00:00` | `0123456789ab` | yes | `by ci@"
    assert row in text
    assert "| `prod` | never deployed |  |  |  | no |" in text
    assert "- `dev`: `deploy | now`" in text  # outside a table a pipe is only text
    assert to_markdown(statuses[0]).startswith("### Stack status")


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError, match="no Markdown rendering for int"):
        to_markdown(3)


# -- hostile strings render as text (this output goes into pull-request comments) ---------------------------

HOSTILE = [
    "<img src=x onerror=alert('evil')>",
    "<!-- evil: the rest of the comment vanishes",
    "@evil-octocat please approve",
    "**evil** _evil_ ~~evil~~",
    "[evil](https://evil.example/)",
    "![evil](https://evil.example/x.png)",
    "evil\n\n| forged | row |\n|---|---|\n| a | b |",
    "`evil` and ``evil`` and ```evil",
    "</details><script>alert('evil')</script><details>",
    "evil | pipes | everywhere",
    "evil\r\n# a heading",
    "evil\u202e reversed",
    "evil\x1b[31m red",
]


def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _outside_code(html: str) -> str:
    import re

    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def _renderings(hostile: str) -> list[tuple[str, int]]:
    """Every rendering with ``hostile`` wherever a result carries outside text; each with its table rows."""
    urn = f"urn:pulumi:dev::p::t::{hostile}"
    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    drift = DriftReport(
        stack=hostile,
        resources=(
            DriftedResource(
                urn=urn,
                type="t",
                kind=DriftKind.CHANGED,
                diffs=(PropertyDiff(path=hostile, recorded=hostile, actual={"k": hostile}),),
            ),
        ),
    )
    fleet = FleetDrift(
        stacks=(
            StackDrift(
                stack=hostile, report=None, error=StackError("StackNotFoundError", hostile), project="p"
            ),
            StackDrift(stack=f"{hostile}2", report=drift, project=hostile),
        ),
        unread=(f"{hostile}.json: no such file or directory",),
    )
    last = Deployment(1, "update", "succeeded", when, when, hostile, "0123456789abcdef")
    status = StackStatus(hostile, last, at_head=True, locked=True, lock=StackLock(hostile, hostile, 42))
    preview = PreviewResult(
        stack=hostile, changes={"update": 1}, steps=(Step(urn=urn, op="update", type="t", keys=(hostile,)),)
    )
    previews = FleetPreview(
        stacks=(
            StackPreview(stack=hostile, result=preview, project=hostile),
            StackPreview(stack=f"{hostile}3", result=None, error=StackError("StackNotFoundError", hostile)),
        ),
        shard="0/2",
    )
    suspended = KubeObject("Kustomization", hostile, hostile, (hostile,))
    drain = DrainResult(suspended=(suspended,), deleted=(KubeObject("Service", hostile, hostile),))
    destroyed = DestroyResult(
        stack=hostile,
        changes={"delete": 2},
        version=3,
        commit=hostile,
        drain=drain,
        sweeps=(
            SweepResult(hostile, hostile, orphans=(Orphan(hostile, hostile, {hostile: hostile}, hostile),)),
            SweepResult(hostile, hostile, error=hostile),
        ),
        kept=(f"urn:pulumi:dev::p::t::{hostile}",),
    )
    planned = DestroyPreview(
        stack=hostile,
        changes={"delete": 1},
        steps=(Step(urn=urn, op="delete", type="t"),),
        drain=DrainResult(deleted=(KubeObject("Ingress", hostile, hostile),), planned=True),
    )
    skipped = DestroyPreview(stack=hostile, changes={}, steps=(), drain=DrainResult(skipped=hostile))
    # (rendering, <tr> rows it must have: header rows included)
    return [
        (to_markdown(destroyed), 1 + 1 + 3 + 2),  # the counts, the drain, one sweep's orphans
        (to_markdown(planned), 2 + 2 + 2),
        (to_markdown(skipped), 0),
        (to_markdown(drift), 2 + 2),
        (to_markdown(fleet), 2 + 3 + 2),  # by cause, by stack, then the drifted stack's details
        (to_markdown(previews), 3 + 2),
        (to_markdown((status,)), 2),
        (to_markdown(preview), 2 + 2),
    ]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_string_renders_as_text_wherever_it_appears(hostile: str) -> None:
    for markdown, rows in _renderings(hostile):
        html = _html(markdown)
        outside = _outside_code(html)
        assert "evil" not in outside, outside  # only ever inside code: never a tag, a link or a mention
        for tag in ("<img", "<a ", "<script", "<!--", "<strong", "<em", "<del", "<h1"):
            assert tag not in outside, (tag, outside)
        assert html.count("<tr>") == rows, html  # no row forged, none broken
        assert html.count("<details>") == html.count("</details>") <= 1


# -- and on a terminal, no control character is printed as one --------------------------------------------


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("a\x1b[2J\x1b[Hwiped", "a\\x1b[2J\\x1b[Hwiped"),  # clear the screen
        ("ok\rFAKED", "ok\\x0dFAKED"),  # overwrite the line
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),  # a bidi override
        ("bell\x07", "bell\\x07"),
    ],
)
def test_text_output_shows_control_characters_as_escapes(hostile: str, shown: str) -> None:
    import io

    from gitops_infra.cli._console import CliConsole
    from gitops_infra.cli._render.operations import print_preview

    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=200)
    step = Step(urn=f"urn:pulumi:dev::p::t::{hostile}", op="update", type="t", keys=("content",))
    print_preview(console, "Preview", PreviewResult(stack="dev", changes={"update": 1}, steps=(step,)))
    console.print(f"message: {hostile}")
    text = out.getvalue()
    assert shown in text and hostile not in text
    assert not any(c in text for c in "\x1b\r\x07\u202e")


def test_a_kept_urn_is_one_line_of_text_whatever_its_name_holds() -> None:
    import io

    from gitops_infra.automation import DestroyResult
    from gitops_infra.cli._console import CliConsole
    from gitops_infra.cli._render.destroy import print_destroy

    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=200)
    urn = "urn:pulumi:dev::p::t::key\n::error::forged"
    print_destroy(
        console, DestroyResult(stack="dev", changes={"delete": 1}, version=2, commit=None, kept=(urn,))
    )
    lines = out.getvalue().splitlines()
    assert lines[2:] == [
        "  urn:pulumi:dev::p::t::key ::error::forged"
    ]  # one line: no forged workflow command
    assert not any(line.lstrip().startswith("::") for line in lines)


def _gitops_renderings(hostile: str) -> list[tuple[str, int]]:
    """The GitOps layer, wherever a rendering shows it, with ``hostile`` in every string Flux reports."""
    from gitops_infra.automation import (
        FluxStatus,
        GitOpsReport,
        GitOpsSource,
        GitOpsSync,
        Layer,
        PromotionEvidence,
        PromotionResult,
    )

    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    layer = GitOpsReport(
        sources=(
            GitOpsSource(
                "GitRepository",
                hostile,
                hostile,
                ready=False,
                reason=hostile,
                message=hostile,
                revision=hostile,
            ),
        ),
        syncs=(
            GitOpsSync(
                "Kustomization",
                hostile,
                hostile,
                ready=True,
                suspended=True,
                applied_revision=hostile,
                source_revision=f"{hostile}2",
            ),
        ),
        failing=(FluxStatus("HelmRelease", hostile, hostile, ready=False, reason=hostile, message=hostile),),
    )
    drift = DriftReport(stack=hostile, gitops=layer, layers=(Layer.IAC, Layer.GITOPS))
    last = Deployment(1, "update", "succeeded", when, when, "m", "0123456789abcdef")
    status = StackStatus(hostile, last, at_head=True, locked=False, gitops=layer)
    evidence = PromotionEvidence(hostile, "0" * 40, 3, when, 60.0, drift=False, gitops=layer)
    promoted = PromotionResult(
        stack=hostile, changes={"update": 1}, version=4, commit="0" * 40, outputs={}, evidence=evidence
    )
    fleet = FleetDrift(stacks=(StackDrift(stack=hostile, report=drift, project="p"),))
    unreachable = DriftReport(stack="dev", gitops=GitOpsReport(error=hostile), layers=(Layer.GITOPS,))
    return [
        (to_markdown(drift), 1 + 3),  # the Flux objects' table: a header, three objects
        (to_markdown((status,)), 2),
        (to_markdown(promoted), 2 + 7 + 4),  # changes, the evidence (a header, six checks), the Flux objects
        (to_markdown(fleet), 2 + 4),
        (to_markdown(unreachable), 0),
    ]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_what_flux_reports_renders_as_text_wherever_it_appears(hostile: str) -> None:
    for markdown, rows in _gitops_renderings(hostile):
        html = _html(markdown)
        outside = _outside_code(html)
        assert "evil" not in outside, outside
        for tag in ("<img", "<a ", "<script", "<!--", "<strong", "<em", "<del", "<h1"):
            assert tag not in outside, (tag, outside)
        assert html.count("<tr>") == rows, html
        assert html.count("<details>") == html.count("</details>") <= 1


def test_a_promotion_is_what_was_deployed_then_the_evidence() -> None:
    from gitops_infra.automation import PromotionEvidence, PromotionResult

    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    evidence = PromotionEvidence(
        "dev", "0123456789abcdef" * 2 + "01234567", 3, when, 5400.0, 86400.0, drift=False
    )
    result = PromotionResult(
        stack="prod", changes={"update": 1}, version=7, commit=evidence.commit, outputs={}, evidence=evidence
    )
    text = to_markdown(result)
    assert text.startswith("### Promoted `0123456789ab` to `prod` (version 7)\n")
    assert "| age | 1h30m |" in text and "| max age | 24h |" in text and "| IaC drift | none |" in text
    assert "| source update | version 3 |" in text and "GitOps layer" not in text  # not checked, not shown


# -- every string field of every result, through every rendering (issue 44) ---------------------------------


def _filled(kind: Any, hostile: str, flag: bool, errors: bool) -> Any:
    """A value of type ``kind`` with ``hostile`` in every string, even where we usually write it (an
    error's type, a kind, an operation, a note); ``flag`` in every bool; and the fields that switch a
    rendering to its error branch (``error``, ``skipped``) set only when ``errors``."""
    import types
    from collections.abc import Mapping
    from dataclasses import fields, is_dataclass
    from enum import Enum
    from typing import Union, get_args, get_origin, get_type_hints

    origin, args = get_origin(kind), get_args(kind)
    if kind in (str, Any, object):
        return hostile
    if origin in (Union, types.UnionType):
        return _filled(next(a for a in args if a is not type(None)), hostile, flag, errors)
    if origin is tuple:
        if isinstance(args[0], type) and issubclass(args[0], Enum):
            return tuple(args[0])
        return (_filled(args[0], hostile, flag, errors),)
    if origin in (dict, Mapping):
        return {hostile: _filled(args[1], hostile, flag, errors)}
    if kind is bool:
        return flag
    if kind in (int, float):
        return kind(3)
    if kind is datetime:
        return datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    if isinstance(kind, type) and issubclass(kind, Enum):
        try:
            return kind(hostile)  # a mode read from the engine's history keeps any value
        except ValueError:
            return next(iter(kind))
    assert is_dataclass(kind), kind
    hints = get_type_hints(kind)
    values = {
        f.name: None
        if f.name in ("error", "skipped") and not errors
        else _filled(hints[f.name], hostile, flag, errors)
        for f in fields(kind)
        if f.init
    }
    return kind(**values)


def _every_result(hostile: str) -> list[Any]:
    """Each kind of result :func:`to_markdown` renders (subclasses too), in each of its branches."""
    from gitops_infra.cli._render import _renderers

    def kinds(kind: type) -> list[type]:
        return [kind, *(k for sub in kind.__subclasses__() for k in kinds(sub))]

    found: list[Any] = []
    for flag in (True, False):
        for errors in (True, False):
            for rendered, _ in _renderers():
                if rendered is tuple:  # status --all: a tuple of statuses
                    found.append((_filled(StackStatus, hostile, flag, errors),))
                    continue
                found += [_filled(kind, hostile, flag, errors) for kind in kinds(rendered)]
    return found


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_string_of_every_result_renders_as_text_in_every_markdown_rendering(hostile: str) -> None:
    # `fleet report` renders inputs anyone who can write an artifact controls: an error's type or a
    # Flux object's kind is any text there, so no field is trusted for being "ours" (issue 44).
    from gitops_infra.errors import OperationFailedError

    results = _every_result(hostile)
    assert {type(r).__name__ for r in results} >= {"FleetDrift", "DestroyPreview", "PromotionResult", "Plan"}
    failed = OperationFailedError(hostile, stack=hostile, operation="destroy")
    failed.sweeps = (SweepResult(hostile, hostile, error=hostile),)
    from gitops_infra.cli._render.destroy import failed_destroy_markdown

    for markdown in [*(to_markdown(r) for r in results), failed_destroy_markdown(failed)]:
        html = _html(markdown)
        outside = _outside_code(html)
        assert "evil" not in outside, (markdown, outside)
        for tag in ("<img", "<a ", "<script", "<!--", "<strong", "<em", "<del", "<h1"):
            assert tag not in outside, (tag, outside)
        assert html.count("<details>") == html.count("</details>") <= 1


def test_a_word_a_result_carries_is_shown_as_it_is_only_when_nothing_in_it_is_markup() -> None:
    from gitops_infra.cli._render.markdown import word

    assert [word(w) for w in ("update", "HelmRelease", "StackNotFoundError", "resource-import")] == [
        "update",
        "HelmRelease",
        "StackNotFoundError",
        "resource-import",
    ]
    for text in ("a_b_", "@team", "www.evil.example", "GH-1", ":smile:", "x y", "-", "&amp;", ""):
        assert word(text).startswith("`") or text == "", text


@pytest.mark.parametrize("hostile", HOSTILE)
def test_fleet_report_markdown_shows_every_field_of_a_hostile_report_as_text(
    hostile: str, tmp_path: Path
) -> None:
    # The error's type and a failing Flux object's kind were rendered as Markdown: "we" write them, but
    # a report is an artifact or a pod log, which anyone who can write one controls (issue 44).
    import json

    from click.testing import CliRunner

    from gitops_infra.automation import FluxStatus, GitOpsReport, Layer
    from gitops_infra.automation.results import to_jsonable
    from gitops_infra.cli import EXIT_PENDING, main

    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    failing = FluxStatus(hostile, hostile, hostile, ready=False, reason=hostile, message=hostile)
    drift = DriftReport(
        stack="prod",
        project="p",
        checked_at=when,
        gitops=GitOpsReport(failing=(failing,), checked_at=when),
        layers=(Layer.IAC, Layer.GITOPS),
        resources=(
            DriftedResource(
                urn=f"urn:pulumi:prod::p::t::{hostile}",
                type=hostile,
                kind=DriftKind.CHANGED,
                diffs=(PropertyDiff(path=hostile, recorded=hostile, actual={hostile: hostile}),),
            ),
        ),
    )
    error = {
        "error": {"type": hostile, "message": hostile},
        "stack": "dev",
        "project": "p",
        "checked_at": when.isoformat(),
    }
    job = {"error": {"type": hostile, "message": hostile}}  # a job that failed before it knew its stack
    report = tmp_path / "report.json"
    report.write_text("\n".join(json.dumps(to_jsonable(d)) for d in (drift, error, job)))
    result = CliRunner().invoke(main, ["fleet", "report", str(report), "--format", "markdown"])
    assert result.exit_code == EXIT_PENDING, result.output
    html = _html(result.stdout)
    outside = _outside_code(html)
    assert "evil" not in outside, outside
    for tag in ("<img", "<a ", "<script", "<!--", "<strong", "<em", "<del", "<h1"):
        assert tag not in outside, (tag, outside)
    # The causes (a header, one cause), the stacks (a header, two), the drifted stack's resources and
    # its Flux objects (a header and one row each): no row forged, none broken.
    assert html.count("<tr>") == 2 + 3 + 2 + 2, html
    assert html.count("<details>") == html.count("</details>") == 1
