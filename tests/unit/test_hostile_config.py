"""Hostile stack configs: whatever ``Pulumi.<stack>.yaml`` holds, the outcome is a result or a ConfigError.

Hypothesis generates mutations of the committed dev and prod configs (wrong types, missing and unknown
keys, out-of-range numbers, odd strings and unicode, huge values, nested junk, values that are not
mappings, YAML-only types such as dates, ``!!binary`` and ``!!set``, alias cycles) and arbitrary junk,
plus raw text for the stack file itself. Each goes through ``load_config``, the offline plan
(``offline_plan``) and the ``gitops-infra plan`` command. Anything but a result or a ``ConfigError`` (for
the CLI: exit 0, or exit 1 with ``ConfigError: `` on stderr and no traceback) is a bug, and so is a
planted secret showing up in an error or a plan.

Examples are derandomized, so every run checks the same ones. To hunt for new cases, set
``GITOPS_INFRA_HYPOTHESIS_SCALE=N``: N times as many examples, from a random seed.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gitops_infra import config as config_module
from gitops_infra.automation import Plan, StackOptions, offline_plan
from gitops_infra.automation.results import to_jsonable
from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.config import StackConfig, load_config, plan_config
from gitops_infra.contract import Environment
from gitops_infra.errors import ConfigError, OperationFailedError

from ..support import REPO_ROOT, stack_project
from .conftest import MINIMAL

SCALE = int(os.environ.get("GITOPS_INFRA_HYPOTHESIS_SCALE", "1"))
STACK = "hostile"
CANARY = "hostile-canary-7f3a9c-never-echo"
"""Planted as the GitHub token: it must never appear in an error or a plan."""


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        derandomize=SCALE == 1,
        database=None,  # deterministic, and no .hypothesis/ directory in the tree
        deadline=None,  # a plan that runs the program takes 0.1-1 s
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- what the generated configs are made of ------------------------------------------------------------


def _committed(stack: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO_ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return loaded


BASES: dict[str, dict[str, Any]] = {
    "dev": _committed("dev"),
    # prod enables SOPS and notifications, so it needs their secrets: set as `pulumi config set --secret`
    # would.
    "prod": {
        **_committed("prod"),
        "gitops-infra:sopsAgeKey": {"secure": "v1:AAAAciphertext"},
        "gitops-infra:notificationWebhook": {"secure": "v1:AAAAwebhookciphertext"},
    },
    "minimal": {f"gitops-infra:{key}": value for key, value in MINIMAL.items()},
}

_MODELS = (
    Environment,
    config_module.ClusterSpec,
    config_module.NodeGroupSpec,
    config_module.TaintSpec,
    config_module.NewVpcSpec,
    config_module.ExistingVpcSpec,
    config_module.NetworkSpec,
    config_module.EndpointSpec,
    config_module.GitSpec,
    config_module.DeployKeySpec,
    config_module.FluxSpec,
    config_module.TolerationSpec,
    config_module.HealthCheckSpec,
    config_module.NotificationsSpec,
)
FIELD_NAMES = sorted({field.alias or name for model in _MODELS for name, field in model.model_fields.items()})
TOP_KEYS = [
    *(f"gitops-infra:{key}" for key in (*config_module.SECTIONS, *config_module.SECRET_KEYS)),
    *config_module.SECTIONS,
    "aws:region",
    "gitops-infra:",
    "gitops-infra:cluster:name",
    ":cluster",
    "gitops_infra:cluster",
]


def _leaves(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        for value in node.values():
            yield from _leaves(value)
    elif isinstance(node, list):
        for value in node:
            yield from _leaves(value)
    else:
        yield node


# Values that are right somewhere in a config, so a mutation can put them in the wrong place.
PLAUSIBLE = sorted({repr(v): v for base in BASES.values() for v in _leaves(base)}.values(), key=repr)
WEIRD_STRINGS = [
    "",
    " ",
    "\t",
    "\n",
    "\x00",
    "null",
    "~",
    "yes",
    "0x1F",
    "1e309",
    "NaN",
    "0.0.0.0/0",
    "10.0.0.0/33",
    "10.0.0.1/16",
    "::/0",
    "1.33",
    "v1.33",
    "1.9",
    "../..",
    "/etc/passwd",
    "clusters/../..",
    "a" * 5000,
    "ä",
    "İstanbul",
    "\u202eevil",
    "\ufeffbom",
    "💥🔥",
    "\ud800",  # a lone surrogate: valid in a YAML escape, not encodable as UTF-8
    "${PULUMI_ACCESS_TOKEN}",
    "{secure: x}",
    "arn:aws:iam::1:role/x",
    "gitops-infra:cluster",
    "-",
    "a--b",
    "UPPER",
    "1m",
    "-1m",
    "1d",
    "0s",
    "ssh://git@github.com/x/y",
    "owner/name",
    "aws:owner",
    "NO_SCHEDULE",
    "one-per-az",
    "image-automation-controller",
    "source-watcher",
    "secure",
]
WEIRD_NUMBERS = [
    0,
    -1,
    1,
    2,
    3,
    6,
    19,
    20,
    450,
    451,
    16384,
    16385,
    2**31,
    2**63,
    -(2**63),
    10**100,
    0.5,
    2.0,
    -0.0,
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    True,
    False,
]
YAML_ONLY = [
    datetime.date(2026, 1, 1),
    datetime.datetime(2026, 1, 1, 12, 30),
    b"\x00\xffbinary",
    {"a", "b"},  # !!set
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.sampled_from(WEIRD_STRINGS),
    st.sampled_from(WEIRD_NUMBERS),
    st.sampled_from(PLAUSIBLE),
    st.sampled_from(YAML_ONLY),
)
keys = st.one_of(
    st.sampled_from(FIELD_NAMES),
    st.sampled_from(TOP_KEYS),
    st.text(max_size=12),
    st.sampled_from(WEIRD_STRINGS),
    st.integers(-5, 5),
    st.none(),
    st.booleans(),
)
junk = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _set(root: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    _get(root, path[:-1])[path[-1]] = value


MUTATIONS = ("replace", "edge", "delete", "add", "wrap", "stringify", "duplicate", "empty", "hoist", "cycle")


@st.composite
def mutated_configs(draw: st.DrawFn) -> dict[str, Any]:
    """A committed (or the minimal) config with a few structural mutations: mostly plausible, never valid."""
    config = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    cycle: dict[Any, Any] | list[Any] | None = None
    for _ in range(draw(st.integers(1, 4))):
        paths = [path for path in _paths(config) if path]
        path = draw(st.sampled_from(paths))
        current = _get(config, path)
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "replace":
            _set(config, path, draw(junk))
        elif kind == "edge":
            _set(config, path, draw(st.sampled_from(WEIRD_NUMBERS) | st.sampled_from(WEIRD_STRINGS)))
        elif kind == "delete":
            parent = _get(config, path[:-1])
            del parent[path[-1]]
        elif kind == "add" and isinstance(current, dict):
            current[draw(keys)] = draw(junk)
        elif kind == "add" and isinstance(current, list):
            current.append(draw(junk))
        elif kind == "wrap":
            _set(config, path, draw(st.sampled_from([[current], {"value": current}, [[current]]])))
        elif kind == "stringify":
            _set(
                config,
                path,
                json.dumps(current, default=repr) if isinstance(current, dict | list) else str(current),
            )
        elif kind == "duplicate" and isinstance(current, list) and current:
            current.append(copy.deepcopy(current[0]))
        elif kind == "empty":
            _set(config, path, draw(st.sampled_from([{}, [], "", None])))
        elif kind == "hoist":
            _set(config, path, copy.deepcopy(_get(config, draw(st.sampled_from(paths)))))
        elif kind == "cycle" and isinstance(current, dict | list):
            cycle = current
        else:
            _set(config, path, draw(junk))
    if isinstance(cycle, dict):
        # What a YAML alias to an enclosing node (`&a {self: *a}`) loads as; made last, so that the
        # mutations above never walk it.
        cycle["self"] = cycle
    elif isinstance(cycle, list):
        cycle.append(cycle)
    if draw(st.booleans()):
        # load_config accepts bare keys too (a stack file may not); foreign namespaces are ignored.
        config = {str(key).removeprefix("gitops-infra:"): value for key, value in config.items()}
    return config


# Edits that keep a config valid (mostly) while putting odd values where the program reads them: these
# are the examples that get past validation and run the whole program.
any_text = st.text(min_size=1, max_size=40) | st.sampled_from([w for w in WEIRD_STRINGS if w])
tag_names = any_text.filter(lambda name: len(name) <= 128 and not name.startswith("aws:"))
tag_values = st.text(max_size=256) | st.sampled_from([w for w in WEIRD_STRINGS if len(w) <= 256])
dns_labels = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?\Z")


def _groups(config: dict[str, Any]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = config["gitops-infra:cluster"]["nodeGroups"]
    return groups


@st.composite
def _benign_edit(draw: st.DrawFn, config: dict[str, Any]) -> None:
    cluster, flux = config["gitops-infra:cluster"], config.setdefault("gitops-infra:flux", {})
    group = draw(st.sampled_from(_groups(config)))
    kind = draw(
        st.sampled_from(
            [
                "tags",
                "labels",
                "taints",
                "instance-types",
                "ami",
                "sizes",
                "many-groups",
                "rotation",
                "branch",
                "region",
                "tolerations",
                "health-checks",
                "notifications",
                "names",
            ]
        )
    )
    if kind == "tags":
        config["gitops-infra:tags"].update(draw(st.dictionaries(tag_names, tag_values, max_size=5)))
    elif kind == "labels":
        group["labels"] = draw(st.dictionaries(any_text, any_text, max_size=4))
    elif kind == "taints":
        effect = st.sampled_from(["NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"])
        taint = st.fixed_dictionaries(
            {"key": any_text.filter(lambda k: len(k) <= 63), "effect": effect},
            optional={"value": st.text(max_size=63)},
        )
        group["taints"] = draw(st.lists(taint, max_size=3))
    elif kind == "instance-types":
        group["instanceTypes"] = draw(st.lists(any_text, min_size=1, max_size=3))
    elif kind == "ami":
        group["amiType"] = draw(any_text)
    elif kind == "sizes":
        low = draw(st.integers(0, 450))
        high = draw(st.integers(max(low, 1), 450))
        group.update(minSize=low, maxSize=high, desiredSize=draw(st.integers(low, high) | st.none()))
        group["diskSize"] = draw(st.integers(20, 16384))
        if group["desiredSize"] is None:
            del group["desiredSize"]
    elif kind == "many-groups":
        names = draw(st.lists(dns_labels, min_size=1, max_size=12, unique=True))
        cluster["nodeGroups"] = [{**group, "name": name} for name in names]
    elif kind == "rotation":
        config["gitops-infra:git"].setdefault("deployKey", {})["rotation"] = draw(st.text(max_size=64))
    elif kind == "branch":
        config["gitops-infra:git"]["branch"] = draw(st.from_regex(r"\A[^\s~^:?*\[\\]{1,40}\Z"))
    elif kind == "region":
        config["aws:region"] = draw(junk)
    elif kind == "tolerations":
        toleration = st.fixed_dictionaries(
            {},
            optional={
                "key": any_text,
                "operator": st.sampled_from(["Exists", "Equal"]),
                "value": any_text,
                "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
            },
        )
        flux["tolerations"] = draw(st.lists(toleration, max_size=3))
    elif kind == "health-checks":
        check = st.fixed_dictionaries(
            {"apiVersion": any_text, "kind": any_text, "name": dns_labels, "namespace": dns_labels}
        )
        flux["healthChecks"] = draw(st.lists(check, max_size=3))
    elif kind == "notifications":
        flux["components"] = ["source-controller", "kustomize-controller", "notification-controller"]
        flux["notifications"] = draw(
            st.fixed_dictionaries(
                {"providerType": st.sampled_from(["slack", "msteams", "generic", "github"])},
                optional={"channel": any_text, "address": any_text, "secretName": dns_labels},
            )
        )
    else:
        config["gitops-infra:environment"]["name"] = draw(dns_labels)
        cluster["name"] = draw(st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9-]{0,60}\Z"))


@st.composite
def odd_but_valid_configs(draw: st.DrawFn) -> dict[str, Any]:
    """A committed config with odd values where they are allowed: most of these run the program."""
    config = copy.deepcopy(BASES[draw(st.sampled_from(["dev", "prod"]))])
    for _ in range(draw(st.integers(1, 3))):
        draw(_benign_edit(config))
    return config


def _with_secrets(config: Any, draw: st.DrawFn) -> Any:
    if isinstance(config, dict) and draw(st.booleans()):
        config["gitops-infra:githubToken"] = draw(
            st.sampled_from([CANARY, {"secure": CANARY}, [CANARY], {"nested": CANARY}])
        )
    return config


@st.composite
def raw_configs(draw: st.DrawFn) -> Any:
    """What ``load_config`` may be handed: a mutated committed config, a junk mapping, or plain junk."""
    config = draw(
        st.one_of(mutated_configs(), odd_but_valid_configs(), st.dictionaries(keys, junk, max_size=8), junk)
    )
    return _with_secrets(config, draw)


YAML_TEXTS = [
    "",
    "---\n",
    "config:\n",
    "config: [unclosed\n",
    "config:\n\tgitops-infra:tags: {owner: x}\n",
    "a: b: c\n",
    "%YAML 9.9\n---\nconfig: {}\n",
    "--- !!python/object:os.system\nconfig: {}\n",
    "config: !!python/name:os.system\n",
    "config:\n  aws:region: !!binary aGVsbG8=\n",
    "config:\n  aws:region: &a [*a]\n",
    "config:\n  gitops-infra:tags: &t {owner: x, self: *t}\n",
    "config: &c {gitops-infra:flux: *c}\n",
    "config: [1, 2]\n",
    "- just\n- a list\n",
    "just a string\n",
    "42\n",
    "config:\n  aws:region: 2026-01-01\n",
    "config:\n  gitops-infra:tags: {owner: x}\n---\nconfig: {}\n",
    "config: {gitops-infra:tags: {? [a, b] : c}}\n",
    "config:\n  gitops-infra:githubToken:\n    secure: " + CANARY + "\n  gitops-infra:git: [\n",
    "\ufeffconfig: {}\n",
    "config: {\x00}\n",
    "secretsprovider: awskms://nope\nconfig: {}\n",
]


@st.composite
def stack_files(draw: st.DrawFn) -> str:
    """The text of ``Pulumi.<stack>.yaml``: a dumped mutated or junk config, known-hostile YAML, or text."""
    kind = draw(st.sampled_from(["valid", "valid", "valid", "mutated", "mutated", "junk", "yaml", "text"]))
    if kind == "valid":
        document: Any = {"config": _with_secrets(draw(odd_but_valid_configs()), draw)}
    elif kind == "mutated":
        document = {"config": _with_secrets(draw(mutated_configs()), draw)}
    elif kind == "junk":
        document = draw(st.one_of(junk, st.fixed_dictionaries({"config": junk})))
    elif kind == "yaml":
        return draw(st.sampled_from(YAML_TEXTS))
    else:
        return draw(st.text(max_size=200))
    return yaml.safe_dump(document, allow_unicode=draw(st.booleans()), sort_keys=False)


# -- the checks ----------------------------------------------------------------------------------------


def _check_config_error(error: ConfigError) -> None:
    assert error.problems, "a ConfigError lists at least one problem"
    assert all(isinstance(problem, str) and problem for problem in error.problems)
    assert CANARY not in str(error) and CANARY not in repr(error)


def test_the_committed_configs_are_the_valid_starting_points() -> None:
    # The mutations start from these; if they did not load, the property tests would prove little.
    for name, base in BASES.items():
        assert isinstance(load_config(base, stack=name), StackConfig)


@_settings(500)
@given(raw=raw_configs())
def test_load_config_returns_a_config_or_raises_config_error(raw: Any) -> None:
    try:
        loaded = load_config(raw, stack=STACK)
    except ConfigError as error:
        event("ConfigError")
        _check_config_error(error)
        # Each by its key path: the project's, or aws:region, which External Secrets' region defaults to.
        where = ("gitops-infra:", "aws:region:")
        assert all(problem.startswith(where) for problem in error.problems), error.problems
    else:
        event("loaded")
        assert isinstance(loaded, StackConfig)
        assert CANARY not in repr(loaded)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose program is this repository's stack program; each example writes its stack file."""
    return stack_project(tmp_path_factory.mktemp("hostile-project"))


def _write(project: Path, text: str) -> None:
    # A lone surrogate is written as-is (surrogatepass), which makes the file invalid UTF-8 on purpose.
    (project / f"Pulumi.{STACK}.yaml").write_bytes(text.encode("utf-8", errors="surrogatepass"))


def _plan_outcome(project: Path) -> Plan | ConfigError:
    try:
        return offline_plan(STACK, options=StackOptions(work_dir=project), config_step=plan_config)
    except ConfigError as error:
        return error


@_settings(120)
@given(text=stack_files())
def test_offline_plan_returns_a_plan_or_raises_config_error(project: Path, text: str) -> None:
    _write(project, text)

    outcome = _plan_outcome(project)

    event(type(outcome).__name__)
    if isinstance(outcome, ConfigError):
        _check_config_error(outcome)
    else:
        assert outcome.resources, "a plan that succeeds registers the platform's resources"
        assert CANARY not in json.dumps(to_jsonable(outcome), default=repr)


@_settings(40)
@given(text=stack_files(), as_json=st.booleans())
def test_the_plan_command_exits_0_or_prints_a_config_error(project: Path, text: str, as_json: bool) -> None:
    _write(project, text)

    result = CliRunner().invoke(
        main, ["plan", STACK, "--cwd", str(project), *(["--json"] if as_json else [])]
    )

    # CliRunner catches what the command raises; anything but the CLI's own exit is a crash.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    event(f"exit {result.exit_code}")
    assert "Traceback" not in result.output
    assert CANARY not in result.output
    if result.exit_code == EXIT_OK:
        assert result.stderr == ""
        if as_json:
            assert json.loads(result.stdout)["stack"] == STACK
    else:
        assert result.exit_code == EXIT_ERROR, result.output
        if as_json:  # the document says it all: stderr holds nothing it does not
            assert json.loads(result.stdout)["error"]["type"] == "ConfigError"
            assert result.stderr == ""
        else:
            assert result.stderr.startswith("ConfigError: "), result.stderr


# A few hand-picked cases, so the properties above are known to reach both outcomes.
OUTCOMES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "committed": lambda config: config,
    "negative min size": lambda config: _set(
        config, ("gitops-infra:cluster", "nodeGroups", 0, "minSize"), -1
    ),
    "tags not a mapping": lambda config: config.update({"gitops-infra:tags": ["owner"]}),
}


@pytest.mark.parametrize("case", sorted(OUTCOMES))
def test_both_outcomes_are_reached(project: Path, case: str) -> None:
    config = copy.deepcopy(BASES["dev"])
    OUTCOMES[case](config)
    _write(project, yaml.safe_dump({"config": config}))

    outcome = _plan_outcome(project)

    assert isinstance(outcome, Plan if case == "committed" else ConfigError), outcome


FAILING_PROGRAMS = {
    "raises after registering": 'aws.kms.Key("leftover")\nraise RuntimeError("x")\n',
    "input the engine cannot carry": 'aws.kms.Key("leftover", description="\\ud800")\n',
}


@pytest.mark.parametrize("program", sorted(FAILING_PROGRAMS))
def test_a_failed_plan_leaves_nothing_behind_for_the_next_one(tmp_path: Path, program: str) -> None:
    # Hostile examples run one after another in one process, as any long-lived caller would: a failed
    # run's leftover registrations must neither fail the next plan nor land in its graph.
    (tmp_path / "Pulumi.yaml").write_text("name: leftovers\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi_aws as aws\n" + FAILING_PROGRAMS[program])

    with pytest.raises(OperationFailedError):
        offline_plan("x", options=StackOptions(work_dir=tmp_path), config_step=plan_config)
    after = offline_plan("dev", options=StackOptions(work_dir=REPO_ROOT), config_step=plan_config)

    assert "leftover" not in {resource.name for resource in after.resources}
    assert len(after.resources) == len(
        offline_plan("dev", options=StackOptions(work_dir=REPO_ROOT), config_step=plan_config).resources
    )


@pytest.mark.parametrize("program", sorted(FAILING_PROGRAMS))
def test_a_failed_plan_reports_its_error_once_and_no_traceback_later(tmp_path: Path, program: str) -> None:
    # A caller that catches the error and goes on (or exits) must not get the same error again, as
    # tracebacks, whenever the collector finds the run's failed futures: asyncio logs each as "exception
    # was never retrieved". CI saw that log, formatted inside an unrelated ast.parse, break it.
    (tmp_path / "Pulumi.yaml").write_text("name: leftovers\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi_aws as aws\n" + FAILING_PROGRAMS[program])
    caller = (
        "import gc, logging\n"
        "from pathlib import Path\n"
        "logging.basicConfig()\n"
        "from gitops_infra.automation import StackOptions, offline_plan\n"
        "from gitops_infra.config import plan_config\n"
        "from gitops_infra.errors import OperationFailedError\n"
        "def plan(stack, where):\n"
        "    offline_plan(stack, options=StackOptions(work_dir=Path(where)), config_step=plan_config)\n"
        "try:\n"
        f"    plan('x', {str(tmp_path)!r})\n"
        "except OperationFailedError:\n"
        "    print('failed once')\n"
        f"plan('dev', {str(REPO_ROOT)!r})\n"
        "gc.collect()\n"
    )

    done = subprocess.run([sys.executable, "-c", caller], capture_output=True, text=True, timeout=120)

    assert (done.returncode, done.stdout) == (0, "failed once\n"), done.stderr
    assert done.stderr == ""
