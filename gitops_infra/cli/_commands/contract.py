"""``gitops-infra contract``: the environment contract's schema, and a check of a document, for app teams.

It imports no Pulumi at all: app teams' pipelines run it without any SDK.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..._files import FileTooLarge, read_regular_file
from .._main import EXIT_ERROR, EXIT_OK, CliError, main
from .._output import echo
from .._render import to_json
from .._render.contract import print_contract_check

__all__: list[str] = []


@main.group(name="contract")
def contract_group() -> None:
    """The environment contract app teams read: its JSON Schema, and a check of a document."""


@contract_group.command()
def schema() -> None:
    """Print the JSON Schema of the environment ConfigMap's data."""
    from ...contract import contract_schema

    echo(json.dumps(contract_schema(), indent=2))


@contract_group.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout, nothing else.")
def check(file: str, as_json: bool) -> None:
    """Check FILE (a ConfigMap manifest, or its data alone; YAML or JSON; - for stdin).

    Exits 0 when it holds the contract, 1 when it does not.
    """
    from ...contract import MAX_CONFIGMAP_BYTES, check_contract

    source = "<stdin>" if file == "-" else file
    too_large = f"{source}: is larger than {MAX_CONFIGMAP_BYTES} bytes, the most a ConfigMap holds"
    try:
        raw = _read(file, MAX_CONFIGMAP_BYTES)
    except FileTooLarge:
        raise CliError("ContractCheckError", too_large) from None
    except (OSError, ValueError) as exc:  # a closed stdin, an unreadable file, a FIFO or a device
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CliError("ContractCheckError", f"{source}: cannot be read ({detail})") from None
    if len(raw) > MAX_CONFIGMAP_BYTES:
        raise CliError("ContractCheckError", too_large)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError("ContractCheckError", f"{source}: not a text file (UTF-8 YAML or JSON)") from None

    result = check_contract(text, source=source)
    if as_json:
        echo(to_json(result))
    else:
        print_contract_check(result)
    sys.exit(EXIT_OK if result.valid else EXIT_ERROR)


def _read(file: str, limit: int) -> bytes:
    """FILE's bytes, up to ``limit``; stdin's up to one byte past it (an input far over the limit is not
    read whole, let alone parsed, to say it is too big). A path must name a regular file: a FIFO would
    block the check until a writer came (forever, in CI), and a device's read may never end."""
    if file != "-":
        return read_regular_file(Path(file), limit)
    if sys.stdin is None:  # started with fd 0 closed (`<&-`)
        raise ValueError("stdin is closed")
    return sys.stdin.buffer.read(limit + 1)
