"""Helm charts a test packages itself, and the fleet manifests that release them: a ``HelmRepository`` on a
loopback HTTP server (:mod:`._loopback`) and a ``HelmRelease`` (``helm.toolkit.fluxcd.io/v2``).

No ``helm`` binary is needed: a packaged chart is a gzipped tar holding one directory named after the
chart (``Chart.yaml`` with ``apiVersion: v2``, ``values.yaml``, ``templates/``), as ``helm package``
writes it, and the repository is those archives and an ``index.yaml`` naming each by a relative URL and
its SHA-256, as ``helm repo index`` writes it.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import tarfile
from collections.abc import Mapping
from typing import Any

import yaml

from ._loopback import Loopback

REPOSITORY = "charts"
"""The ``HelmRepository``'s name."""


def chart(name: str, version: str, templates: Mapping[str, str], values: Mapping[str, Any]) -> bytes:
    """The chart ``name`` at ``version``, packaged: its ``templates`` (file name: text) and default
    ``values``."""
    files = {
        "Chart.yaml": yaml.safe_dump(
            {"apiVersion": "v2", "name": name, "version": version, "type": "application"}
        ),
        "values.yaml": yaml.safe_dump(dict(values)),
        **{f"templates/{file}": text for file, text in templates.items()},
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def serve_repository(server: Loopback, name: str, charts: Mapping[str, bytes]) -> None:
    """Serve the chart ``name``'s ``charts`` (version: archive) and their ``index.yaml`` from ``server``."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    entries = [
        {
            "apiVersion": "v2",
            "name": name,
            "version": version,
            "type": "application",
            "urls": [f"{name}-{version}.tgz"],
            "digest": hashlib.sha256(archive).hexdigest(),
            "created": now,
        }
        for version, archive in charts.items()
    ]
    index = {"apiVersion": "v1", "entries": {name: entries}, "generated": now}
    server.files["/index.yaml"] = yaml.safe_dump(index).encode()
    for version, archive in charts.items():
        server.files[f"/{name}-{version}.tgz"] = archive


def release_manifests(
    name: str,
    *,
    url: str,
    version: str,
    namespace: str,
    target_namespace: str,
    values: Mapping[str, Any],
) -> str:
    """The ``HelmRepository`` at ``url`` and a ``HelmRelease`` of its chart ``name`` at ``version``, both
    in ``namespace``, released (and its Helm records stored) in ``target_namespace``, as a fleet
    repository holds them. A failed upgrade is rolled back once and not retried."""
    repository = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": REPOSITORY, "namespace": namespace},
        "spec": {"interval": "1m", "url": url},
    }
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "interval": "1m",
            "releaseName": name,
            "targetNamespace": target_namespace,
            "storageNamespace": target_namespace,
            "chart": {
                "spec": {
                    "chart": name,
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": REPOSITORY},
                    "interval": "1m",
                }
            },
            "upgrade": {"remediation": {"retries": 0, "remediateLastFailure": True, "strategy": "rollback"}},
            "values": dict(values),
        },
    }
    return yaml.safe_dump_all([repository, release])
