"""The docs cannot rot: their runnable snippets run, the configuration page names every key the config
accepts (and no other), the CLI reference lists every command and option that ``--help`` does, the policy
page's table is the pack's, the API reference shows every public name, and no file points outside the
repository.

Each check is a function of the pages' text, so each is also shown to catch a page broken on purpose.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ..pages import (
    DOCS,
    REPO_ROOT,
    CodeBlock,
    cli_reference,
    code_blocks,
    fence_lines,
    option_flags,
    pages,
    render_cli_reference,
    runnable_blocks,
)

TIMEOUT = 180
CONFIGURATION = DOCS / "configuration.md"
POLICY = DOCS / "policy.md"
BIN = Path(sys.executable).parent
GITOPS_INFRA = BIN / "gitops-infra"
# The project a docs program (a block titled __main__.py) is planned in: its dev stack sets the secret
# `kubeconfig` (as ciphertext, planned with a placeholder) and the GitHub provider's owner.
PROGRAM_PROJECT = "name: docs\nruntime: python\n"
PROGRAM_STACK = {
    "config": {"docs:kubeconfig": {"secure": "v1:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0"}, "github:owner": "acme"}
}
PUBLIC_PACKAGES = (
    "gitops_infra",
    "gitops_infra.automation",
    "gitops_infra.components",
    "gitops_infra.config",
    "gitops_infra.contract",
    "gitops_infra.errors",
)


# -- runnable snippets ---------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """This interpreter's environment, its ``gitops-infra`` first on PATH, and this checkout importable."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def run_block(block: CodeBlock, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run a snippet from the repository's root: Python with this interpreter, shell with bash (``-e``,
    ``-u``, ``pipefail``), and a Pulumi program as the offline plan of a project of its own."""
    if block.program:
        (tmp_path / "Pulumi.yaml").write_text(PROGRAM_PROJECT)
        (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(PROGRAM_STACK))
        (tmp_path / "__main__.py").write_text(block.code)
        args, cwd = [sys.executable, "-m", "gitops_infra.cli", "plan", "dev", "--json"], tmp_path
    elif block.language == "python":
        args, cwd = [sys.executable, "-c", block.code], REPO_ROOT
    else:
        args, cwd = ["bash", "-euo", "pipefail", "-c", block.code], REPO_ROOT
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda block: block.where)
def test_every_runnable_snippet_runs(block: CodeBlock, tmp_path: Path) -> None:
    done = run_block(block, tmp_path)
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def test_the_docs_have_runnable_snippets_of_each_kind() -> None:
    blocks = runnable_blocks()
    assert {block.language for block in blocks} == {"python", "bash"}
    assert any(block.program for block in blocks)
    assert any(block.path.name == "README.md" for block in blocks)


@pytest.mark.parametrize("path", pages(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_no_runnable_snippet_hides_from_the_collector(path: Path) -> None:
    # A ```python indented under an admonition is no fence to CommonMark, so it would never run.
    found = [block.language for block in code_blocks(path)]
    opened = fence_lines(path.read_text())
    assert [lang for lang in opened if lang in ("python", "bash")] == [
        lang for lang in found if lang in ("python", "bash")
    ]


def test_a_snippet_that_fails_fails_its_test(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = (
        "- a list item\n\n  ```bash\n  false\n  echo unreached\n  ```\n\n"
        "```python\nraise SystemExit(3)\n```\n\n"
        '```python title="__main__.py"\nimport pulumi\npulumi.Config().require("missing")\n```\n\n'
        "```sh\nnot run\n```\n"
    )
    blocks = [block for block in code_blocks(page, text) if block.runnable]
    assert [(block.language, block.program) for block in blocks] == [
        ("bash", False),
        ("python", False),
        ("python", True),
    ]
    for index, block in enumerate(blocks):
        work = tmp_path / str(index)
        work.mkdir()
        assert run_block(block, work).returncode != 0, block


def test_a_bash_snippet_fails_on_a_failed_pipe(tmp_path: Path) -> None:
    block = CodeBlock(REPO_ROOT / "README.md", 1, "bash", None, "false | cat\n")
    assert run_block(block, tmp_path).returncode != 0


# -- every config key on the configuration page ---------------------------------------------------------


def _models(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models(arg)]


def _is_list(annotation: object) -> bool:
    return any(typing.get_origin(arg) in (tuple, list) for arg in (annotation, *typing.get_args(annotation)))


def _model_keys(model: type[BaseModel], prefix: str) -> Iterator[str]:
    """``prefix.<alias>`` of each field, and of each field of a model it holds (``[]`` for a list)."""
    for name, field in model.model_fields.items():
        path = f"{prefix}.{field.alias or name}"
        nested = _models(field.annotation)
        if nested and _is_list(field.annotation):
            path += "[]"
        yield path
        for inner in nested:
            yield from _model_keys(inner, path)


def _accepted_top_level_keys() -> set[str]:
    """The ``gitops-infra:`` keys ``load_config`` accepts: each candidate (the ``StackConfig`` and
    ``StackSecrets`` fields, and the fleet section) that it does not report as an unknown key."""
    from gitops_infra.config import StackConfig, StackSecrets, load_config
    from gitops_infra.errors import ConfigError

    candidates = {
        _section_key(field)
        for dataclass in (StackConfig, StackSecrets)
        for field in dataclasses.fields(dataclass)
    } | {"fleet"}
    base = yaml.safe_load((REPO_ROOT / "Pulumi.dev.yaml").read_text())["config"]
    accepted = set()
    for key in sorted(candidates):
        try:
            load_config({**base, f"gitops-infra:{key}": "x"}, stack="dev")
        except ConfigError as error:
            if f"gitops-infra:{key}: unknown key" in str(error):
                continue
        accepted.add(key)
    return accepted


def _section_key(field: dataclasses.Field[typing.Any]) -> str:
    """The key a ``StackConfig`` field is read from: its own name, camelCase, unless it names another
    (``secret_providers`` holds ``secrets``)."""
    return str(field.metadata.get("key", to_camel(field.name)))


def _other_namespace_keys() -> set[str]:
    """The keys of other namespaces the config reads (``aws:profile``): named in its source."""
    import gitops_infra.config

    source = Path(gitops_infra.config.__file__)
    files = sorted(source.parent.rglob("*.py")) if source.name == "__init__.py" else [source]
    return {
        key
        for path in files
        for key in re.findall(r"""["']((?:aws|github):[A-Za-z]+)["']""", path.read_text())
    }


def config_keys() -> set[str]:
    """Every key the config accepts, as the configuration page writes them: a top-level key with its
    namespace (``gitops-infra:cluster``), a key inside a section by its path
    (``cluster.nodeGroups[].name``)."""
    from gitops_infra.automation import FleetSpec
    from gitops_infra.config import StackConfig

    keys = {f"gitops-infra:{key}" for key in _accepted_top_level_keys()} | _other_namespace_keys()
    hints = typing.get_type_hints(StackConfig)
    for field in dataclasses.fields(StackConfig):
        # A section that is a list of models (tenants) writes its keys as the lists inside sections do.
        prefix = _section_key(field) + ("[]" if _is_list(hints[field.name]) else "")
        for model in _models(hints[field.name]):
            keys.update(_model_keys(model, prefix))
    keys.update(_model_keys(FleetSpec, "fleet"))
    return keys


def documented_keys(text: str) -> set[str]:
    """The keys in the first column of the configuration page's tables."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE))


def key_problems(accepted: set[str], text: str) -> list[str]:
    documented = documented_keys(text)
    return [f"not on the page: {key}" for key in sorted(accepted - documented)] + [
        f"on the page, but the config does not accept it: {key}" for key in sorted(documented - accepted)
    ]


@pytest.fixture(scope="module")
def accepted_keys() -> set[str]:
    return config_keys()


def test_the_configuration_page_names_every_key_and_no_other(accepted_keys: set[str]) -> None:
    assert key_problems(accepted_keys, CONFIGURATION.read_text()) == []


def test_the_key_walk_finds_keys_of_every_depth(accepted_keys: set[str]) -> None:
    # So that the rule above holds something: the sections, their nested models, lists of models, the
    # secrets, the fleet and the other namespaces.
    assert {
        "gitops-infra:environment",
        "gitops-infra:tags",
        "gitops-infra:fleet",
        "gitops-infra:githubToken",
        "gitops-infra:sopsAgeKey",
        "gitops-infra:notificationWebhook",
        "environment.baseDomain",
        "cluster.existing.kubeconfig",
        "cluster.nodeGroups[].taints[].effect",
        "git.deployKey.existing.privateKey",
        "flux.notifications.providerType",
        "github.appAuth.pemFile",
        "tenants[].source.repository.deployKey.existing.privateKey",
        "tenants[].limits[].defaultRequest",
        "fleet.wave",
        "aws:profile",
        "aws:assumeRoles",
        "aws:region",
        "gitops-infra:secrets",
        "secrets.sealedSecrets.rotations",
        "secrets.externalSecrets.secretPrefix",
    } <= accepted_keys
    # A field of StackConfig whose name is not a key (the secret values; the section held apart from them).
    assert "gitops-infra:secretProviders" not in accepted_keys and "gitops-infra:stack" not in accepted_keys


def test_a_key_missing_from_the_page_or_made_up_there_is_found(accepted_keys: set[str]) -> None:
    text = CONFIGURATION.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `flux.readyTimeout` |"))
    assert key_problems(accepted_keys, text.replace(row + "\n", "")) == ["not on the page: flux.readyTimeout"]
    made_up = text + "\n| `flux.readyTimeoutt` | | a typo |\n"
    assert key_problems(accepted_keys, made_up) == [
        "on the page, but the config does not accept it: flux.readyTimeoutt"
    ]


# -- the CLI reference ---------------------------------------------------------------------------------


def _help(command: tuple[str, ...]) -> str:
    return subprocess.run(
        [str(GITOPS_INFRA), *command, "--help"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    ).stdout


def _section(help_text: str, title: str) -> list[str]:
    """The lines of one section of click's help (``Options:``), up to the next one."""
    lines = help_text.split(f"\n{title}\n", 1)[1].splitlines() if f"\n{title}\n" in help_text else []
    end = next((index for index, line in enumerate(lines) if line and not line.startswith(" ")), len(lines))
    return lines[:end]


def _subcommands(help_text: str) -> list[str]:
    lines = _section(help_text, "Commands:")
    return [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("   ")]


def cli_help() -> dict[str, set[str]]:
    """What ``gitops-infra ... --help`` shows, by command: its options. Every group's commands too."""
    found: dict[str, set[str]] = {}
    level: list[tuple[str, ...]] = [()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        while level:
            texts = list(pool.map(_help, level))
            found.update(
                {
                    " ".join(("gitops-infra", *command)): option_flags(_section(text, "Options:"))
                    for command, text in zip(level, texts, strict=True)
                }
            )
            level = [
                (*command, sub)
                for command, text in zip(level, texts, strict=True)
                for sub in _subcommands(text)
            ]
    return found


def reference_problems(reference: dict[str, set[str]], helped: dict[str, set[str]]) -> list[str]:
    problems = [f"no section for `{command}`" for command in sorted(helped.keys() - reference.keys())]
    problems += [
        f"a section for `{command}`, which --help does not list"
        for command in sorted(reference.keys() - helped.keys())
    ]
    for command in sorted(helped.keys() & reference.keys()):
        problems += [f"`{command}`: {flag} missing" for flag in sorted(helped[command] - reference[command])]
        problems += [
            f"`{command}`: {flag} not in --help" for flag in sorted(reference[command] - helped[command])
        ]
    return problems


@pytest.fixture(scope="module")
def helped() -> dict[str, set[str]]:
    return cli_help()


def test_the_cli_reference_lists_every_command_and_option_help_does(helped: dict[str, set[str]]) -> None:
    assert reference_problems(cli_reference(), helped) == []


def test_help_was_read_for_every_command(helped: dict[str, set[str]]) -> None:
    assert {
        "gitops-infra",
        "gitops-infra up",
        "gitops-infra fleet report",
        "gitops-infra contract check",
    } <= set(helped)
    assert {"--cwd", "--json", "--yes", "-y", "--require-promoted-from", "--lock-wait"} <= helped[
        "gitops-infra up"
    ]


def test_a_reference_that_lost_a_command_or_an_option_is_found(helped: dict[str, set[str]]) -> None:
    lines = render_cli_reference()
    start = next(i for i, line in enumerate(lines) if re.match(r"#+ gitops-infra history \{", line))
    level = lines[start].split(" ", 1)[0] + " "
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith(level))
    without_history = cli_reference(lines[:start] + lines[end:])
    assert reference_problems(without_history, helped) == ["no section for `gitops-infra history`"]
    without_yes = cli_reference([line for line in lines if not line.startswith("  -y, --yes")])
    assert "`gitops-infra up`: --yes missing" in reference_problems(without_yes, helped)


def test_without_the_docs_hook_a_command_loaded_early_would_hide_the_others(tmp_path: Path) -> None:
    # mkdocs-click lists a group's commands from `group.commands` when any is loaded: the docs hook
    # loads them all first. A fresh process that looked `up` up before rendering shows why.
    code = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import click\n"
        "from gitops_infra.cli import main\n"
        "from tests.pages import cli_reference, render_cli_reference\n"
        "main.get_command(click.Context(main), 'up')\n"
        "print(json.dumps(sorted(cli_reference(render_cli_reference(hooks=False)))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
        cwd=tmp_path,
    )
    listed = set(yaml.safe_load(done.stdout))
    assert "gitops-infra up" in listed and listed < set(cli_reference())


# -- the policy page -------------------------------------------------------------------------------------


def policy_problems(text: str) -> list[str]:
    """Each policy of the pack has a row in the page's table with its level and its config keys."""
    from gitops_infra.policy.pack import policies

    rows = {match[1]: match[0] for match in re.finditer(r"^\| `([a-z-]+)` \|.*$", text, re.MULTILINE)}
    problems = []
    for policy in policies():
        row = rows.pop(policy.name, None)
        if row is None:
            problems.append(f"{policy.name}: no row")
            continue
        level = str(policy.enforcement_level.value).lower()
        if f"| {level} |" not in row:
            problems.append(f"{policy.name}: not {level}")
        schema = policy.config_schema
        for key in sorted(schema.properties if schema is not None else {}):
            if f"`{key}`" not in row:
                problems.append(f"{policy.name}: config {key} not in its row")
    problems += [f"{name}: not a policy of the pack" for name in sorted(rows)]
    return problems


def test_the_policy_table_is_the_packs() -> None:
    assert policy_problems(POLICY.read_text()) == []


def test_a_policy_table_out_of_step_is_found() -> None:
    text = POLICY.read_text()
    broken = text.replace("| `flux-sync-alerting` | advisory |", "| `flux-sync-alerting` | mandatory |")
    broken = broken.replace("`minNodes` (`1`), ", "")
    assert policy_problems(broken) == [
        "eks-node-group-size-bounds: config minNodes not in its row",
        "flux-sync-alerting: not advisory",
    ]


# -- the API reference -----------------------------------------------------------------------------------


def reference_pages() -> dict[str, Path]:
    """The module each API reference page renders (``::: gitops_infra.automation``)."""
    found = {}
    for path in sorted((DOCS / "reference").glob("*.md")):
        for module in re.findall(r"^::: (\S+)$", path.read_text(), re.MULTILINE):
            found[module] = path
    return found


def unrendered_names(module: str, search_path: Path = REPO_ROOT) -> list[str]:
    """The names of ``module.__all__`` that griffe, which the API reference reads the code with, cannot
    find or resolve statically (a lazy re-export whose import is not under ``TYPE_CHECKING``)."""
    import importlib

    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(search_path)])
    package = loader.load(module.split(".")[0])
    loader.resolve_aliases(implicit=False, external=False)
    found = package[module.split(".", 1)[1]] if "." in module else package
    missing = []
    for name in importlib.import_module(module).__all__:
        member = found.members.get(name)
        try:
            resolved = member is not None and (not member.is_alias or member.final_target is not None)
        except griffe.AliasResolutionError:
            resolved = False
        if not resolved:
            missing.append(name)
    return missing


def _python_handler_options() -> dict[str, object]:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml names Python objects (`!!python/name:`), which a safe load need not build.
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((REPO_ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    plugin = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    options: dict[str, object] = plugin["handlers"]["python"]["options"]
    return options


def test_every_public_package_has_a_reference_page() -> None:
    assert set(PUBLIC_PACKAGES) <= set(reference_pages())


def test_the_reference_shows_public_names_whatever_their_docstrings() -> None:
    # mkdocstrings leaves out an object without a docstring unless told otherwise: a constant in __all__
    # (FLUX_CHART_VERSION) would be missing from the reference.
    options = _python_handler_options()
    assert options["show_if_no_docstring"] is True
    assert options["filters"] == "public"  # what __all__ lists, and nothing else


@pytest.mark.parametrize("module", PUBLIC_PACKAGES)
def test_the_api_reference_can_show_every_public_name(module: str) -> None:
    assert unrendered_names(module) == []


def test_a_public_name_griffe_cannot_see_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A lazy re-export whose import is not under TYPE_CHECKING exists at run time, not to griffe.
    package = tmp_path / "lazy_example"
    package.mkdir()
    (package / "thing.py").write_text('"""Things."""\n\ndef seen(): ...\n\ndef hidden(): ...\n')
    (package / "__init__.py").write_text(
        '"""Lazy."""\nfrom typing import TYPE_CHECKING\n\n'
        "if TYPE_CHECKING:\n    from .thing import seen\n\n"
        "__all__ = ['hidden', 'seen']\n\n"
        "def __getattr__(name):\n    from . import thing\n\n    return getattr(thing, name)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert unrendered_names("lazy_example", tmp_path) == ["hidden"]


# -- links and homes -----------------------------------------------------------------------------------

ROOT_PAGES = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "bench/README.md", "examples/ci/README.md")
README_LINES = 160


def broken_links(path: Path, text: str) -> list[str]:
    """Relative links of a Markdown file outside the site (the site's own are checked by its strict
    build) that name no file of the repository."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [
        target
        for target in targets
        if not re.match(r"[a-z]+:|#", target) and not (path.parent / target.split("#")[0]).exists()
    ]


@pytest.mark.parametrize("name", ROOT_PAGES)
def test_the_pages_outside_the_site_link_to_files_that_exist(name: str) -> None:
    path = REPO_ROOT / name
    assert broken_links(path, path.read_text()) == []


def test_a_link_to_a_page_that_is_gone_is_found() -> None:
    path = REPO_ROOT / "README.md"
    assert broken_links(path, "[gone](docs/no-such-page.md) [ok](docs/design.md) [web](https://x.y)") == [
        "docs/no-such-page.md"
    ]


def test_the_readme_is_a_landing_page() -> None:
    lines = (REPO_ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_LINES
    first_screen = "\n".join(lines[:40])
    assert "make plan" in first_screen and "make demo" in first_screen


def _tracked_files() -> list[Path]:
    skip = {".git", ".venv", ".venv-floor", ".tools", ".pulumi-state", ".demo", "build", "dist"}
    return [
        path
        for path in REPO_ROOT.rglob("*")
        if path.is_file()
        and not skip & set(path.relative_to(REPO_ROOT).parts)
        and "__pycache__" not in path.parts
        and path.suffix in (".py", ".md", ".sh", ".yml", ".yaml", ".toml", ".cfg", ".txt", "")
    ]


def test_nothing_points_outside_the_repository_for_its_design() -> None:
    # The design and the upstream notes live in docs/; the notes outside the repository are no one's.
    needles = ("../" + "shared", "REAL_" + "CLUSTER", "shared/" + "DESIGN")
    offenders = [
        str(path.relative_to(REPO_ROOT))
        for path in _tracked_files()
        if any(needle in path.read_text(errors="replace") for needle in needles)
    ]
    assert offenders == []
