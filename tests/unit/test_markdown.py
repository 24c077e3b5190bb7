"""``--format markdown``: the layout of each rendering, and what it must never let through."""

from __future__ import annotations

from datetime import UTC, datetime

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
    from gitops_infra.cli._operations import print_preview

    out = io.StringIO()
    console = CliConsole(file=out, highlight=False, markup=False, soft_wrap=True, width=200)
    step = Step(urn=f"urn:pulumi:dev::p::t::{hostile}", op="update", type="t", keys=("content",))
    print_preview(console, "Preview", PreviewResult(stack="dev", changes={"update": 1}, steps=(step,)))
    console.print(f"message: {hostile}")
    text = out.getvalue()
    assert shown in text and hostile not in text
    assert not any(c in text for c in "\x1b\r\x07\u202e")


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
