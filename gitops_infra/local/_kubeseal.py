"""``kubeseal --cert``: a Secret sealed offline against a certificate, as CI seals with the stack's output.

Only the standard library and the toolchain's ``kubeseal`` (built beside the controller it seals for). The
Secret's values go to ``kubeseal`` on its standard input, never on a command line or in a file.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._project import Toolchain

__all__ = ["seal"]


def seal(
    toolchain: Toolchain,
    cert_pem: str,
    name: str,
    namespace: str,
    data: Mapping[str, str],
    *,
    scope: str = "strict",
) -> dict[str, Any]:
    """The SealedSecret for a Secret ``name`` in ``namespace`` holding ``data`` (``stringData``), sealed
    with ``cert_pem``'s key in ``scope`` (``strict``: only that name in that namespace opens it)."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "stringData": dict(data),
    }
    with tempfile.TemporaryDirectory() as directory:
        cert = Path(directory) / "cert.pem"
        cert.write_text(cert_pem)
        done = subprocess.run(
            [toolchain.binary("kubeseal"), "--cert", str(cert), "--scope", scope, "--format", "json"],
            input=json.dumps(secret),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    if done.returncode != 0:
        # kubeseal's message names the problem, not the values (they are on its standard input).
        raise RuntimeError(f"kubeseal failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    sealed: dict[str, Any] = json.loads(done.stdout)
    return sealed
