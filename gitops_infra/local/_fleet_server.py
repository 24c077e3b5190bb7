"""The fleet repository over SSH: Debian's ``sshd`` with its own config, on loopback, serving a bare git
repository through ``git-shell`` to the deploy keys it trusts.

The deploy keys are ECDSA P-384 in OpenSSH format (:class:`DeployKeyPair`), as Flux's bootstrap makes
them, and the server has its own host key for ``known_hosts``. Flux's source-controller authenticates to it
exactly as it would to GitHub. The trusted keys change as a repository's deploy keys do
(:meth:`FleetServer.authorize`), and the server says which key each fetch came with
(:meth:`FleetServer.accepted`). As on GitHub, a deploy key is read-only unless registered otherwise: a push
with it is refused with GitHub's words (:data:`READ_ONLY_REFUSAL`), and the server says which key each push
came with and whether it was served (:meth:`FleetServer.pushes`).
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import os
import re
import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._processes import Harness, Processes, free_port
from ._project import SSHD, commit_all, git, require_local_extra, set_identity

try:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
except ModuleNotFoundError:
    require_local_extra()  # names the `local` extra when that is what is missing
    raise

__all__ = ["READ_ONLY_REFUSAL", "DeployKeyPair", "FleetServer"]


@dataclass(frozen=True)
class DeployKeyPair:
    """An SSH key pair in OpenSSH formats: what Flux's bootstrap generates (ECDSA P-384)."""

    private_key: str
    public_key: str

    @classmethod
    def generate(cls) -> DeployKeyPair:
        key = ec.generate_private_key(ec.SECP384R1())
        private = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        ).decode()
        public = key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        return cls(private_key=private, public_key=public.decode())

    @property
    def fingerprint(self) -> str:
        """``SHA256:<base64>``: the fingerprint ``ssh-keygen -l`` prints and ``sshd`` logs."""
        blob = base64.b64decode(self.public_key.split()[1])
        return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


READ_ONLY_REFUSAL = "ERROR: The key you are authenticating with has been marked as read only."
"""What GitHub answers a push made with a read-only deploy key."""

# A deploy key's forced command: `<this> read-only|read-write <fingerprint>`. git-shell serves fetches and
# pushes alike, so a read-only key's push is refused before it; each push is logged with its key.
_SERVE = """#!/bin/sh
case "$SSH_ORIGINAL_COMMAND" in
git-receive-pack*)
  if [ "$1" = read-only ]; then
    echo "refused $2" >>{log}
    echo '{refusal}' >&2
    exit 1
  fi
  echo "served $2" >>{log} ;;
esac
exec git-shell -c "$SSH_ORIGINAL_COMMAND"
"""


def _config_path(path: Path) -> str:
    """``path`` as an argument in sshd's config: double-quoted, so a space in it (a checkout under
    "My Projects") is not a second argument. sshd's config has no escape for a double quote itself."""
    if '"' in str(path) or "\n" in str(path):
        raise ValueError(
            f"the fleet server cannot serve from {str(path)!r}: sshd's config cannot hold a path "
            "with a double quote or a line break; use another directory"
        )
    return f'"{path}"'


# sshd at LogLevel VERBOSE: "Accepted publickey for <user> from <ip> port <n> ssh2: ECDSA SHA256:<b64>".
_ACCEPTED = re.compile(r"Accepted publickey for \S+ from \S+ port \d+ ssh2: \S+ (SHA256:[A-Za-z0-9+/]+)")


class FleetServer(Harness):
    """A bare fleet repository served over SSH (Debian's sshd and git-shell) to its deploy keys."""

    def __init__(self, workdir: Path, deploy_key: DeployKeyPair, *, read_only: bool = True) -> None:
        """A server for ``workdir`` trusting ``deploy_key``: read-only, GitHub's default, unless
        ``read_only`` is false."""
        self.workdir = workdir
        self.deploy_key = deploy_key
        self.read_only = read_only
        self.authorized_keys = workdir / "authorized_keys"
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.processes = Processes(workdir / "logs")
        self.repository = workdir / "fleet.git"
        self.checkout = workdir / "fleet"
        self.port = 0
        self.user = getpass.getuser()

    @property
    def url(self) -> str:
        """The ``ssh://`` URL a GitRepository clones."""
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.repository}"

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        git(self.workdir, "init", "-q", "--bare", "-b", "main", str(self.repository))
        git(self.workdir, "clone", "-q", str(self.repository), str(self.checkout))
        set_identity(self.checkout, "fleet")
        host_key = self.workdir / "ssh_host_ed25519_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fleet-server", "-f", str(host_key)],
            check=True,
        )
        serve = self.workdir / "serve-git"
        log = shlex.quote(str(self.workdir / "logs" / "pushes.log"))
        serve.write_text(_SERVE.format(log=log, refusal=READ_ONLY_REFUSAL))
        serve.chmod(0o755)
        self.authorize(self.deploy_key, read_only=self.read_only)
        self.port = free_port()
        config = self.workdir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {_config_path(host_key)}",
                    f"PidFile {_config_path(self.workdir / 'sshd.pid')}",
                    f"AuthorizedKeysFile {_config_path(self.authorized_keys)}",
                    f"AllowUsers {self.user}",
                    "PermitRootLogin prohibit-password",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        sshd = self.processes.start("sshd", [str(SSHD), "-D", "-e", "-f", str(config)])

        def banner() -> bool:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                return connection.recv(8).startswith(b"SSH-2.0")

        self.processes.wait_until(sshd, banner, "SSH banner")
        public_host_key = (host_key.with_name(host_key.name + ".pub")).read_text().split()
        self.known_hosts = f"[127.0.0.1]:{self.port} {public_host_key[0]} {public_host_key[1]}"

    def authorize(self, *keys: DeployKeyPair, read_only: bool = True) -> None:
        """Trust exactly ``keys`` from the next connection on, as a repository's deploy keys change: to
        fetch, and to push unless ``read_only`` (GitHub's ``read_only``, true by default there too).

        sshd reads the file at each login; it is replaced whole, so a login never reads half of it.
        """
        access = "read-only" if read_only else "read-write"
        # The forced command runs through the user's shell; in the file, a double quote is escaped.
        serve = shlex.quote(str(self.workdir / "serve-git")).replace('"', '\\"')

        # Only git-upload-pack/receive-pack, through git-shell: no shell, no forwarding.
        def restrictions(key: DeployKeyPair) -> str:
            return ",".join(
                [
                    f'command="{serve} {access} {key.fingerprint}"',
                    "no-port-forwarding",
                    "no-X11-forwarding",
                    "no-agent-forwarding",
                    "no-pty",
                ]
            )

        staged = self.authorized_keys.with_suffix(".new")
        staged.write_text("".join(f"{restrictions(key)} {key.public_key}\n" for key in keys))
        staged.chmod(0o600)
        os.replace(staged, self.authorized_keys)

    def accepted(self) -> list[str]:
        """The fingerprint of the key each login was accepted with, oldest first (from sshd's log)."""
        log = self.workdir / "logs" / "sshd.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return _ACCEPTED.findall(text)

    def pushes(self) -> list[tuple[str, bool]]:
        """The key of each push over SSH, and whether it was served (else refused as read-only), oldest
        first."""
        log = self.workdir / "logs" / "pushes.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [
            (fingerprint, outcome == "served") for outcome, fingerprint in (line.split() for line in lines)
        ]

    def commit(self, files: dict[str, str], message: str) -> str:
        """Commit ``files`` (path: content) to ``main`` and push; return the commit's sha.

        On top of what others pushed meanwhile (Flux's image automation pushes to ``main`` too).
        """
        if git(self.checkout, "ls-remote", "origin", "main"):
            git(self.checkout, "pull", "-q", "--rebase", "origin", "main")
        for relative, content in files.items():
            path = self.checkout / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        commit = commit_all(self.checkout, message)
        git(self.checkout, "push", "-q", "origin", "main")
        return commit
