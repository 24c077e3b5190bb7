"""A container registry on loopback: distribution's ``registry`` (v3), over plain HTTP, with no auth and its
storage in its work directory, as Flux's image-reflector-controller scans one with ``spec.insecure``.

Images are pushed to it with the distribution HTTP API alone (:meth:`ImageRegistry.push`): an OCI image is
its blobs (a config and one layer) and a manifest that names them, put under a tag. No container runtime
is needed, and nothing runs the image: it exists to have tags.
"""

from __future__ import annotations

import hashlib
import io
import json
import secrets
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ._processes import Harness, Processes, free_port
from ._project import Toolchain

__all__ = ["MANIFEST_TYPE", "ImageRegistry"]

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
_CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
_LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _layer(tag: str) -> bytes:
    """A tar holding one file, ``/tag``, so that each tag's image differs."""
    content = f"{tag}\n".encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        entry = tarfile.TarInfo("tag")
        entry.size, entry.mode = len(content), 0o644
        tar.addfile(entry, io.BytesIO(content))
    return buffer.getvalue()


class ImageRegistry(Harness):
    """distribution's registry on ``127.0.0.1``: HTTP, no auth, storage under ``workdir``."""

    def __init__(self, workdir: Path, *, toolchain: Toolchain | None = None) -> None:
        self.workdir = workdir
        self.toolchain = toolchain or Toolchain.find()
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.port = 0

    @property
    def host(self) -> str:
        """``127.0.0.1:<port>``: what an image reference starts with (``<host>/app:1.0.0``)."""
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def _start(self) -> None:
        binary = self.toolchain.binary("registry")  # before anything is written: a missing one says how
        self.port = free_port()
        config = self.workdir / "config.yml"
        # JSON is YAML. The http secret signs upload state; the registry makes up one per start without it,
        # and says so in its log.
        document = {
            "version": 0.1,
            "log": {"level": "info"},
            "storage": {"filesystem": {"rootdirectory": str(self.workdir / "storage")}},
            "http": {"addr": self.host, "secret": secrets.token_hex(16)},
            "health": {"storagedriver": {"enabled": False}},
        }
        config.write_text(json.dumps(document, indent=2))
        config.chmod(0o600)
        registry = self.processes.start("registry", [binary, "serve", str(config)])
        self.processes.wait_until(registry, lambda: self._request("GET", "/v2/")[0] == 200, "/v2/")

    def _request(
        self, method: str, target: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, bytes]:
        url = urllib.parse.urljoin(self.url, target)
        request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()

    def _put_blob(self, repository: str, data: bytes) -> str:
        digest = _digest(data)
        _, headers, _ = self._request("POST", f"/v2/{repository}/blobs/uploads/", b"")
        location = headers["Location"]  # where the upload goes on: its query holds the upload's state
        separator = "&" if "?" in location else "?"
        target = f"{location}{separator}digest={urllib.parse.quote(digest)}"
        status, _, _ = self._request("PUT", target, data, {"Content-Type": "application/octet-stream"})
        if status != 201:
            raise RuntimeError(f"the registry did not take blob {digest} of {repository}: {status}")
        return digest

    def push(self, repository: str, tag: str) -> str:
        """Push a small OCI image as ``<repository>:<tag>``; its manifest's digest."""
        layer = _layer(tag)
        config = json.dumps(
            {
                "architecture": "amd64",
                "os": "linux",
                "config": {},
                "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]},
            }
        ).encode()
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": MANIFEST_TYPE,
                "config": {
                    "mediaType": _CONFIG_TYPE,
                    "digest": self._put_blob(repository, config),
                    "size": len(config),
                },
                "layers": [
                    {
                        "mediaType": _LAYER_TYPE,
                        "digest": self._put_blob(repository, layer),
                        "size": len(layer),
                    }
                ],
            }
        ).encode()
        status, headers, _ = self._request(
            "PUT", f"/v2/{repository}/manifests/{tag}", manifest, {"Content-Type": MANIFEST_TYPE}
        )
        if status != 201:
            raise RuntimeError(f"the registry did not take {repository}:{tag}: {status}")
        return str(headers.get("Docker-Content-Digest") or _digest(manifest))

    def tags(self, repository: str) -> list[str]:
        """The tags of ``repository``, as the registry lists them (``/v2/<name>/tags/list``)."""
        _, _, body = self._request("GET", f"/v2/{repository}/tags/list")
        return list(json.loads(body).get("tags") or [])
