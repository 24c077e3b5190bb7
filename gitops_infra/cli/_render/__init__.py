"""Every rendering of a result: text for a terminal or a log, Markdown for a pull request or a job summary
(``--format markdown``), and JSON (``--json``).

One module per kind of result:

- ``plan``: the offline plan (``plan``);
- ``operations``: a preview, an update, a promotion, a refresh, the history, a recovery, and the previews of
  many stacks (``preview --all``);
- ``destroy``: a destroy, its drain and its sweeps, and a failed destroy;
- ``drift``: one stack's drift (``drift STACK``) and the fleet's (``drift --all``, ``fleet report``);
- ``gitops``: the GitOps layer, as drift, status and a promotion's evidence show it;
- ``status``: where stacks stand (``status``);
- ``inventory``: the fleet's stacks (``fleet list``);
- ``contract``: a check of the environment contract (``contract check``);
- ``sealing_keys``: a Sealed Secrets key written into a stack's config, and the cert a stack seals with
  (``sealed-secrets keygen``, ``cert``);
- ``progress``: the lines printed while the engine works (its steps, the drain's objects);

and the pieces they share: ``markdown`` (the table, the fold, the one escape of a string in Markdown),
``names`` (a stack's name among many), ``escape`` (text made safe to show on a terminal or in a CI log).

Commands import renderers; a renderer imports no command, nor the group or the invocation. Each renders a
result as it is: its secrets are already masked (``[secret]``), the offline plan's inputs redacted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["to_json", "to_markdown", "to_yaml"]


def to_json(result: Any, *, warnings: list[str] | None = None) -> str:
    """``result`` as one JSON document; ``warnings`` (what would have been said on stderr) go in it,
    under ``warnings``, when it is an object."""
    from ...automation.results import to_jsonable

    document = to_jsonable(result)
    if warnings and isinstance(document, dict):
        document = {**document, "warnings": list(warnings)}
    return json.dumps(document, indent=2, sort_keys=True)


def to_yaml(document: Any) -> str:
    """``document`` (a manifest) as block-style YAML in its own key order, each value written out where it
    stands: an object used twice is not turned into an anchor and an alias (``&id001``) for a reader to
    follow."""
    import yaml

    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(document, Dumper=Dumper, sort_keys=False)


def to_markdown(result: Any) -> str:
    """``result`` (a preview, an offline plan, a drift report, the fleet's drift, statuses) as Markdown."""
    for kind, render in _renderers():
        if isinstance(result, kind):
            return render(result)
    raise TypeError(f"no Markdown rendering for {type(result).__name__}")


def _renderers() -> list[tuple[type, Callable[[Any], str]]]:
    # Here, not at import: the result types load the engine wrapper, which `--help` must not pay for.
    from ...automation import (
        DestroyPreview,
        DestroyResult,
        DriftReport,
        FleetDrift,
        FleetPreview,
        Plan,
        PreviewResult,
        PromotionResult,
        StackStatus,
    )
    from .destroy import destroy_markdown, destroy_preview_markdown
    from .drift import drift_markdown, fleet_drift_markdown
    from .operations import fleet_preview_markdown, preview_markdown, promotion_markdown
    from .plan import plan_markdown
    from .status import status_markdown

    return [
        (PromotionResult, promotion_markdown),
        (DestroyResult, destroy_markdown),
        (DestroyPreview, destroy_preview_markdown),
        (PreviewResult, preview_markdown),
        (Plan, plan_markdown),
        (DriftReport, drift_markdown),
        (FleetDrift, fleet_drift_markdown),
        (FleetPreview, fleet_preview_markdown),
        (StackStatus, lambda status: status_markdown([status])),
        (tuple, lambda statuses: status_markdown(list(statuses))),  # status_all's
    ]
