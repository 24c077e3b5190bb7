"""The local fleet server from a directory with an odd name, and its deploy keys' two kinds.

A checkout (and so ``make demo``'s ``.demo/``) may sit under a path with a space or a quote in it: sshd's
config, the keys' forced command and its push log must all survive one. A key is read-only, as on GitHub,
unless registered read-write: it fetches either way, and only a read-write key pushes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gitops_infra.local import DeployKeyPair, FleetServer
from gitops_infra.local._fleet_server import READ_ONLY_REFUSAL

pytestmark = pytest.mark.cluster


def _git(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("odd", ["a space", "it's quoted"])
@pytest.mark.parametrize("read_only", [True, False])
def test_a_key_fetches_and_pushes_as_registered_from_an_oddly_named_directory(
    tmp_path: Path, odd: str, read_only: bool
) -> None:
    key = DeployKeyPair.generate()
    server = FleetServer(tmp_path / odd / "fleet", key, read_only=read_only).start()
    try:
        server.commit({"README.md": "the fleet\n"}, "first")
        # ssh splits UserKnownHostsFile on spaces: the client's own files sit where there are none.
        secrets = tmp_path / "client"
        secrets.mkdir()
        identity, known_hosts = secrets / "id", secrets / "known_hosts"
        identity.write_text(key.private_key)
        identity.chmod(0o600)
        known_hosts.write_text(server.known_hosts + "\n")
        env = dict(
            os.environ,
            GIT_SSH_COMMAND=f"ssh -i {identity} -o UserKnownHostsFile={known_hosts} -o IdentitiesOnly=yes",
            GIT_AUTHOR_NAME="t",
            GIT_AUTHOR_EMAIL="t@example.com",
            GIT_COMMITTER_NAME="t",
            GIT_COMMITTER_EMAIL="t@example.com",
        )
        checkout = tmp_path / "checkout"
        cloned = _git(env, "clone", "-q", server.url, str(checkout))
        assert cloned.returncode == 0, cloned.stderr
        (checkout / "app.yaml").write_text("kind: ConfigMap\n")
        _git(env, "-C", str(checkout), "add", ".")
        _git(env, "-C", str(checkout), "commit", "-qm", "second")
        pushed = _git(env, "-C", str(checkout), "push", "-q", "origin", "HEAD:main")
        if read_only:
            assert pushed.returncode != 0
            assert READ_ONLY_REFUSAL in pushed.stderr
        else:
            assert pushed.returncode == 0, pushed.stderr
        assert server.pushes() == [(key.fingerprint, not read_only)]
    finally:
        server.stop()


def test_a_directory_sshd_cannot_name_is_refused_by_name(tmp_path: Path) -> None:
    server = FleetServer(tmp_path / 'say "hi"' / "fleet", DeployKeyPair.generate())
    with pytest.raises(ValueError, match="double quote"):
        server.start()
    assert not server.processes.running
