"""``make demo``: the whole loop on your laptop, on the local cluster harness. ``make demo-down`` stops it.

    gitops-infra local up     # start the local cluster and fleet server, `gitops-infra up local`
    gitops-infra local down   # stop exactly what `up` started, and remove .demo/

Both take a project directory (the current one from the command line): a gitops-infra checkout after
``make setup``, holding the committed ``Pulumi.local.yaml``, ``stacks/`` and the toolchain in ``.tools/``.
``up`` starts the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and
its node, Flux's CRDs and six controllers) and an SSH fleet repository whose ``clusters/local/`` holds a
ConfigMap, all under ``.demo/`` (git-ignored). It runs the committed local stack from a copy in
``.demo/project``, where it writes what exists only while the demo runs (the fleet server's URL and host
key, and the two secrets), then waits for Flux, prints what Flux applied, edits the ``environment``
ConfigMap out of band and shows ``gitops-infra drift local``. The cluster keeps running: the last lines
say how to reach it and stop it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from ._cluster import LocalCluster
from ._fleet_server import DeployKeyPair, FleetServer
from ._project import Toolchain, engine_env, set_secrets, write_project
from ._record import read_record, running, stop, write_record

__all__ = ["down", "up"]

DEMO_PASSPHRASE = "demo"
STACK = "local"
WORKLOAD = """apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-from-git
  namespace: default
data:
  greeting: Flux applied this from the fleet repository
  host: shop.${baseDomain}  # from the environment contract (postBuild.substituteFrom)
"""


@dataclass(frozen=True)
class _Demo:
    """Where the demo of one checkout lives: everything under its ``.demo/`` (git-ignored)."""

    checkout: Path
    toolchain: Toolchain
    root: Path
    pids: Path
    """Every process the demo started, for ``down`` to stop exactly those."""
    shell_env: Path
    project: Path
    """The copy of the local stack's project the demo configures and runs."""

    @classmethod
    def of(cls, project_dir: Path) -> _Demo:
        checkout = project_dir.resolve()
        root = checkout / ".demo"
        return cls(
            checkout=checkout,
            toolchain=Toolchain.of(checkout),
            root=root,
            pids=root / "processes.json",
            shell_env=root / "env",
            project=root / "project",
        )


def _say(message: str) -> None:
    print(f"demo: {message}", flush=True)


def _gitops_infra(demo: _Demo, *args: str, env: dict[str, str], check: bool = True) -> int:
    command = [sys.executable, "-m", "gitops_infra.cli", *args, "--cwd", str(demo.project)]
    return subprocess.run(command, env=env, check=check).returncode


def _record(demo: _Demo, parts: list[LocalCluster | FleetServer]) -> None:
    """Every process the demo started, by pid and start time, for `down` to stop exactly those."""
    write_record(demo.pids, [(p.name, p.popen.pid) for part in parts for p in part.processes.running])


def _project(
    demo: _Demo, cluster: LocalCluster, fleet: FleetServer, key: DeployKeyPair, env: dict[str, str]
) -> None:
    from pulumi import automation as auto

    project = write_project(
        demo.project, "gitops-infra", main=demo.checkout / "stacks", virtualenv=sys.prefix
    )
    shutil.copy(demo.checkout / "Pulumi.local.yaml", project / "Pulumi.local.yaml")
    # The engine setup built, else the one on PATH (setup builds none when a recent enough one is there).
    built = demo.toolchain.engine
    engine = auto.PulumiCommand(root=str(built.parent.parent)) if built else auto.PulumiCommand()
    workspace = auto.LocalWorkspace(work_dir=str(project), env_vars=env, pulumi_command=engine)
    stack = auto.Stack.create(STACK, workspace)
    settings = {
        "gitops-infra:git.url": auto.ConfigValue(fleet.url),
        "gitops-infra:git.knownHosts": auto.ConfigValue(fleet.known_hosts),
    }
    stack.set_all_config(settings, path=True)
    secrets = {
        "gitops-infra:localKubeconfig": cluster.kubeconfig,
        "gitops-infra:localDeployKey": key.private_key,
    }
    set_secrets(project, STACK, secrets, env=env, engine=built)


def up(project_dir: Path) -> None:
    """Start the local cluster and fleet server under ``project_dir/.demo`` and walk through the loop.

    ``project_dir`` is a gitops-infra checkout after ``make setup``. The cluster keeps running afterwards,
    even when a step fails; :func:`down` stops it. Exits with a message when the demo is already running
    or the toolchain is not built.
    """
    demo = _Demo.of(project_dir)
    record = read_record(demo.pids)
    if alive := running(record, demo.root):
        names = ", ".join(f"{each.name} (pid {each.process.pid})" for each in alive)
        sys.exit(f"demo: already running: {names} (make demo-down stops it)")
    if record.damaged:
        _say(f"{_damage(demo, record.problems)}; nothing of the last demo runs, so it starts afresh")
    for needed in ("Pulumi.local.yaml", "stacks"):
        if not (demo.checkout / needed).exists():
            sys.exit(f"demo: {demo.checkout} has no {needed}: run the demo from a gitops-infra checkout")
    if missing := demo.toolchain.missing():
        sys.exit(f"demo: {', '.join(missing)} missing: run `make setup` to build the local cluster")
    shutil.rmtree(demo.root, ignore_errors=True)
    demo.root.mkdir()
    passphrase = os.environ.get("PULUMI_CONFIG_PASSPHRASE", DEMO_PASSPHRASE)
    env = {**os.environ, **engine_env(demo.root / "state", passphrase, path=demo.toolchain.path)}
    key = DeployKeyPair.generate()
    started = time.monotonic()
    cluster = LocalCluster(demo.root / "cluster", toolchain=demo.toolchain)
    fleet = FleetServer(demo.root / "fleet", key)
    parts: list[LocalCluster | FleetServer] = []
    try:
        for part in (cluster, fleet):
            part.start()
            parts.append(part)
        _record(demo, parts)
    except BaseException:
        for part in reversed(parts):
            part.stop()
        raise
    _say(f"local cluster and fleet server up in {time.monotonic() - started:.1f} s ({cluster.server})")
    try:
        _walkthrough(demo, cluster, fleet, key, env)
    except (Exception, KeyboardInterrupt) as exc:
        # The processes are recorded, so the cluster stays inspectable and `down` still stops them.
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
        sys.exit(f"demo: stopped early ({reason}); the cluster is still up, `make demo-down` stops it")


def _walkthrough(
    demo: _Demo, cluster: LocalCluster, fleet: FleetServer, key: DeployKeyPair, env: dict[str, str]
) -> None:
    """Up, Flux sync, what Flux applied, then drift after an out-of-band edit."""
    from kubernetes import client

    fleet.commit({"clusters/local/hello.yaml": WORKLOAD}, "a first workload")
    _project(demo, cluster, fleet, key, env)

    _say("gitops-infra up local  (it returns once Flux reports Ready)")
    _gitops_infra(demo, "up", STACK, "--yes", env=env)
    _wait_for_flux(cluster)
    _say("what Flux applied from clusters/local:")
    core = client.CoreV1Api(cluster.api())
    applied = core.read_namespaced_config_map("hello-from-git", "default")
    name = applied.metadata.name if applied.metadata else None
    print(yaml.safe_dump({"metadata": {"name": name}, "data": applied.data}))

    _say("editing the environment ConfigMap out of band, then: gitops-infra drift local")
    core.patch_namespaced_config_map("environment", "apps", {"data": {"baseDomain": "edited.example.com"}})
    code = _gitops_infra(demo, "drift", STACK, env=env, check=False)
    _say(f"drift exited {code} (2: drift found)")
    _write_shell_env(demo, cluster, env)
    print()
    shell_env = demo.shell_env.relative_to(demo.checkout)
    print(f"source {shell_env}   # KUBECONFIG, the demo's state backend and engine")
    print(f"gitops-infra up {STACK} --refresh --yes --cwd .demo/project   # restores the edited ConfigMap")
    print("make demo-down   # stops the local cluster and the fleet server, and removes .demo/")


def _write_shell_env(demo: _Demo, cluster: LocalCluster, env: dict[str, str]) -> None:
    """Exports that let the user's own shell drive the demo stack the way the demo did."""
    exports = {
        "KUBECONFIG": str(cluster.kubeconfig_path),
        **{
            name: env[name]
            for name in (
                "PULUMI_BACKEND_URL",
                "PULUMI_SKIP_UPDATE_CHECK",
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION",
            )
        },
        # This interpreter's gitops-infra, then the engine and the locally built kubernetes provider,
        # exactly as the demo ran them.
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), *(str(d) for d in demo.toolchain.path), "$PATH"]
        ),
    }
    if "PULUMI_CONFIG_PASSPHRASE" not in os.environ:
        # Only the demo's own throwaway passphrase is written down; a user's stays in their environment.
        exports["PULUMI_CONFIG_PASSPHRASE"] = DEMO_PASSPHRASE
    demo.shell_env.write_text("".join(f'export {name}="{value}"\n' for name, value in exports.items()))


def _wait_for_flux(cluster: LocalCluster, timeout: float = 120.0) -> None:
    from kubernetes import client

    api = client.CustomObjectsApi(cluster.api())
    deadline = time.monotonic() + timeout
    for group, plural in (
        ("source.toolkit.fluxcd.io", "gitrepositories"),
        ("kustomize.toolkit.fluxcd.io", "kustomizations"),
    ):
        while True:
            found = cast(
                "dict[str, Any]",
                api.get_namespaced_custom_object(group, "v1", "flux-system", plural, "flux-system"),
            )
            ready = [c for c in found.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
            if ready and ready[0]["status"] == "True":
                _say(f"{found['kind']} flux-system Ready: {ready[0]['message']}")
                break
            if time.monotonic() > deadline:
                sys.exit(f"demo: {found['kind']} flux-system not Ready after {timeout:.0f} s: {ready}")
            time.sleep(0.5)


def down(project_dir: Path) -> None:
    """Stop exactly the processes :func:`up` started for ``project_dir``, and remove its ``.demo/``.

    Those its record names, and, should the record be damaged or missing, those whose output goes to a
    log under ``.demo/``, as each of the demo's does. A damaged record is said, never a traceback. Exits
    with a message, keeping ``.demo/``, when a process would not stop.
    """
    demo = _Demo.of(project_dir)
    record = read_record(demo.pids)
    if record.damaged:
        _say(f"{_damage(demo, record.problems)}; stopping the processes whose output goes to .demo/")
    alive = running(record, demo.root)
    if not alive:
        _say("nothing running")
    left = stop(alive)
    for each in alive:
        if each not in left:
            _say(f"stopped {each.name} (pid {each.process.pid})")
    if left:
        names = ", ".join(f"{each.name} (pid {each.process.pid})" for each in left)
        sys.exit(f"demo: could not stop {names}; .demo/ is kept for `make demo-down` to try again")
    if demo.root.exists() or demo.root.is_symlink():
        shutil.rmtree(demo.root, ignore_errors=True)
        _say("removed .demo/")


def _damage(demo: _Demo, problems: tuple[str, ...]) -> str:
    """A damaged record, in a line: where it is and what is wrong, its first few problems."""
    said = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"{demo.pids.relative_to(demo.checkout)} is damaged ({said})"
