"""The environment contract outside Pulumi: ``gitops-infra contract schema`` and ``contract check``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from gitops_infra.cli import EXIT_ERROR, EXIT_OK, main
from gitops_infra.contract import (
    CONTRACT_VERSION,
    Environment,
    check_contract,
    contract_schema,
    environment_data,
)

ENV = Environment(name="dev", base_domain="dev.example.com", service_namespace="apps")
DATA = environment_data(ENV)


def configmap(data: Any, name: str = "environment", namespace: str = "apps") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


# -- the schema, used by a JSON Schema validator as an app team's tooling would --------------------------


def test_the_schema_is_valid_json_schema_and_accepts_what_the_platform_writes() -> None:
    schema = contract_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DATA, schema)
    jsonschema.validate(environment_data(ENV.model_copy(update={"ingress_enabled": False})), schema)


@pytest.mark.parametrize(
    "bad",
    [
        DATA | {"contractVersion": "2"},
        DATA | {"ingressEnabled": True},  # a YAML boolean, not the string a ConfigMap holds
        DATA | {"baseDomain": "Not_A_Domain"},
        DATA | {"unknownKey": "x"},
        {k: v for k, v in DATA.items() if k != "contractVersion"},
    ],
)
def test_the_schema_rejects_what_the_contract_rejects(bad: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, contract_schema())
    assert not check_contract(json.dumps(bad)).valid


def test_schema_command_prints_the_schema() -> None:
    # Through the installed entry point, as an app team's CI would run it.
    script = Path(sys.executable).with_name("gitops-infra")
    done = subprocess.run([script, "contract", "schema"], capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == contract_schema()


# -- check ---------------------------------------------------------------------------------------------


def test_a_configmap_manifest_that_holds_the_contract_passes() -> None:
    result = check_contract(yaml.safe_dump(configmap(DATA)), source="env.yaml")
    assert result.valid
    [checked] = result.checked
    assert checked.where == "ConfigMap apps/environment" and checked.environment == ENV


def test_data_alone_in_json_passes() -> None:
    assert check_contract(json.dumps(DATA)).checked[0].where == "data"
    assert check_contract(json.dumps(DATA)).valid


def test_every_problem_is_named_by_its_key() -> None:
    data: dict[str, Any] = DATA | {"ingressEnabled": True, "baseDomain": "Not_A_Domain"}
    [checked] = check_contract(yaml.safe_dump(configmap(data))).checked
    assert checked.problems[0] == "ingressEnabled: must be a string (ConfigMap data are strings), not bool"
    assert checked.problems[1].startswith("baseDomain: 'Not_A_Domain' does not match ")


def test_a_stream_or_list_checks_each_environment_configmap_and_only_those() -> None:
    other = configmap({"anything": "goes"}, name="settings")
    good, bad = configmap(DATA), configmap(DATA | {"contractVersion": "2"}, namespace="flux-system")
    stream = yaml.safe_dump_all([other, good, bad])
    result = check_contract(stream)
    assert [c.where for c in result.checked] == [
        "ConfigMap apps/environment",
        "ConfigMap flux-system/environment",
    ]
    assert not result.valid and result.checked[1].problems[0].startswith("contractVersion: '2' is major")
    listed = {"apiVersion": "v1", "kind": "List", "items": [other, good]}
    assert check_contract(yaml.safe_dump(listed)).valid


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "an empty document: nothing to check"),
        ("a: [\n", "the document is not valid YAML"),
        (yaml.safe_dump_all([configmap({}, name="a"), configmap({}, name="b")]), "no ConfigMap named"),
        (yaml.safe_dump({"apiVersion": "v1", "kind": "Secret", "data": DATA}), "no ConfigMap named"),
    ],
)
def test_a_document_with_nothing_to_check_is_invalid(text: str, problem: str) -> None:
    result = check_contract(text)
    assert not result.valid and result.problems[0].startswith(problem)


def test_check_command_exits_0_when_the_contract_holds_and_1_when_not(tmp_path: Path) -> None:
    good = tmp_path / "environment.yaml"
    good.write_text(yaml.safe_dump(configmap(DATA)))
    result = CliRunner().invoke(main, ["contract", "check", str(good)])
    assert result.exit_code == EXIT_OK
    holds = f"holds contract {CONTRACT_VERSION} (environment dev, baseDomain dev.example.com)"
    assert result.stdout == f"{good}: ConfigMap apps/environment: {holds}\n"
    bad = yaml.safe_dump(configmap(DATA | {"serviceNamespace": "Apps"}))
    result = CliRunner().invoke(main, ["contract", "check", "-", "--json"], input=bad)
    assert result.exit_code == EXIT_ERROR
    document = json.loads(result.stdout)
    assert document["valid"] is False and document["source"] == "<stdin>"
    assert document["checked"][0]["problems"][0].startswith("serviceNamespace: 'Apps' does not match")


def test_check_command_reports_an_unreadable_file_as_one_error(tmp_path: Path) -> None:
    binary = tmp_path / "blob"
    binary.write_bytes(b"\xff\xfe\x00")
    result = CliRunner().invoke(main, ["contract", "check", str(binary), "--json"])
    assert result.exit_code == EXIT_ERROR
    assert json.loads(result.stdout)["error"]["type"] == "ContractCheckError"
    missing = CliRunner().invoke(main, ["contract", "check", str(tmp_path / "missing.yaml")])
    assert missing.exit_code == EXIT_ERROR and missing.stderr.startswith("UsageError: ")


# -- hostile input: one clear answer, bounded in time and memory --------------------------------------------

HOSTILE_DOCUMENTS = [
    pytest.param("[" * 500 + "]" * 500, "nests values more than 64 levels deep", id="500 deep"),
    pytest.param(
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "expands to more than 100000 values",
        id="an alias bomb",
    ),
    pytest.param("data: {a: 1, a: 2}\n", "repeats the key 'a'", id="a repeated key"),
    pytest.param(
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "environment", "data": DATA}),
        "ConfigMap metadata: must be a mapping, not str",
        id="metadata a string",
    ),
    pytest.param(
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": 7, "data": DATA}),
        "ConfigMap metadata: must be a mapping, not int",
        id="metadata a number",
    ),
    pytest.param(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": "environment"}),
        "items: must be a list of objects, not str",
        id="items a string",
    ),
    pytest.param("a: " + "x" * (1024 * 1024), "bytes; a ConfigMap holds 1048576 at most", id="over a MiB"),
    # Python 3.11 refuses to read an integer of over 4,300 digits (CVE-2020-10735): a ValueError before.
    pytest.param(
        "data: {replicas: " + "9" * 5000 + "}\n",
        "the document holds an integer of more than 4,300 digits, more than Python reads (CVE-2020-10735) "
        "(line 1, column 18)",
        id="an integer of 5,000 digits",
    ),
    # A value its tag cannot be: ValueError, KeyError and AttributeError from PyYAML before.
    pytest.param(
        "data: {day: 2001-02-30}\n", "holds a value tagged !!timestamp that is not one", id="Feb 30"
    ),
    pytest.param("data: {a: !!int abc}\n", "holds a value tagged !!int that is not one", id="!!int abc"),
    pytest.param("data: {a: !!bool maybe}\n", "holds a value tagged !!bool that is not one", id="!!bool"),
    pytest.param("data: {a: !!timestamp x}\n", "holds a value tagged !!timestamp", id="!!timestamp x"),
]


@pytest.mark.parametrize(("text", "problem"), HOSTILE_DOCUMENTS)
def test_hostile_documents_get_a_problem_not_a_crash(text: str, problem: str) -> None:
    result = check_contract(text)
    assert not result.valid
    assert any(problem in p for p in result.problems), result.problems


def test_a_huge_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as out:  # 50 MB took 9.5 minutes and 13.4 GB before
        out.truncate(50 * 1024 * 1024)
    result = CliRunner().invoke(main, ["contract", "check", str(huge), "--json"])
    assert result.exit_code == EXIT_ERROR
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "ContractCheckError" and "larger than 1048576 bytes" in error["message"]


@pytest.mark.parametrize("kind", ["a FIFO", "a device"])
def test_a_file_that_is_no_regular_file_is_refused_at_once_not_read(tmp_path: Path, kind: str) -> None:
    # A FIFO blocked the check until a writer came, forever in CI; a device is read without end.
    if kind == "a FIFO":
        path = tmp_path / "environment.yaml"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gitops_infra.cli", "contract", "check", str(path), "--json"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"contract check blocked on {kind}")
    assert done.returncode == EXIT_ERROR, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["type"] == "ContractCheckError"
    assert error["message"] == f"{path}: cannot be read (not a regular file)"
    assert "Traceback" not in done.stderr


def test_a_closed_stdin_is_one_json_error() -> None:
    done = subprocess.run(  # `contract check - --json <&-`
        ["sh", "-c", f'exec "{sys.executable}" -m gitops_infra.cli contract check - --json <&-'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_ERROR, done.stderr
    assert json.loads(done.stdout)["error"]["type"] == "ContractCheckError"
    assert "Traceback" not in done.stderr
