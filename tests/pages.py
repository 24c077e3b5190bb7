"""The docs site's pages as the tests read them: the code blocks of the Markdown files, and the CLI
reference generated from the click commands.

- :func:`code_blocks` and :func:`runnable_blocks`: every fenced block of ``README.md`` and ``docs/``, and
  the ones the tests run. A block is runnable when its language is ``python`` or ``bash``; ``py``,
  ``sh``, ``console``, ``text`` and the rest are shown, never run. A ``python`` block titled
  ``__main__.py`` is a whole Pulumi program, which runs under the offline plan.
- :func:`cli_reference`: ``docs/cli-reference.md`` rendered as the docs build renders it (its hook, then
  mkdocs-click), as the options each command's section lists.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"
RUNNABLE = ("python", "bash")
PROGRAM_TITLE = "__main__.py"
_TITLE = re.compile(r"""\btitle=(["'])(?P<title>.*?)\1""")
_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})\s*(?P<language>\w+)", re.MULTILINE)
_HEADING = re.compile(r"^#+ (?P<command>gitops-infra(?: [\w-]+)*) \{")
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)")


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: where it is, its language, its ``title=`` if any, and its text."""

    path: Path
    line: int
    language: str
    title: str | None
    code: str

    @property
    def runnable(self) -> bool:
        return self.language in RUNNABLE

    @property
    def program(self) -> bool:
        """A whole Pulumi program (``python title="__main__.py"``), run under the offline plan."""
        return self.language == "python" and self.title == PROGRAM_TITLE

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO_ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The Markdown the snippet tests read: the README, and every page of the site."""
    return [REPO_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def code_blocks(path: Path, text: str | None = None) -> list[CodeBlock]:
    """The fenced blocks of ``path`` (or of ``text``, as if it were that file), as CommonMark finds them:
    inside lists and quotes too."""
    from markdown_it import MarkdownIt

    text = path.read_text() if text is None else text
    blocks = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence":
            continue
        language, _, attributes = token.info.strip().partition(" ")
        title = _TITLE.search(attributes)
        line = (token.map[0] if token.map else 0) + 1
        blocks.append(CodeBlock(path, line, language, title["title"] if title else None, token.content))
    return blocks


def fence_lines(text: str) -> list[str]:
    """The language of every line that opens a fenced block, by a plain scan: a cross-check that no
    runnable block hides from :func:`code_blocks` (in an indented admonition, say)."""
    return [match["language"] for match in _FENCE_LINE.finditer(text)]


def runnable_blocks() -> list[CodeBlock]:
    return [block for path in pages() for block in code_blocks(path) if block.runnable]


def _load_docs_hooks() -> None:
    """Run the docs build's own hook (docs/_hooks.py), which loads every lazily registered command."""
    spec = importlib.util.spec_from_file_location("gitops_infra_docs_hooks", DOCS / "_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.on_config({})


def render_cli_reference(*, hooks: bool = True) -> list[str]:
    """``docs/cli-reference.md`` as Markdown once mkdocs-click has generated it, as the build does
    (``hooks=False`` leaves the build's hook out, to show what it is for)."""
    import markdown

    if hooks:
        _load_docs_hooks()
    md = markdown.Markdown(extensions=["attr_list", "mkdocs-click"])
    return list(md.preprocessors["mk_click"].run((DOCS / "cli-reference.md").read_text().split("\n")))


def option_flags(help_lines: Iterator[str] | list[str]) -> set[str]:
    """The flags of click's ``Options:`` lines (``-y, --yes  Apply ...`` gives ``-y`` and ``--yes``): an
    option's line is indented by two spaces; its description's continuation lines, further."""
    flags: set[str] = set()
    for line in help_lines:
        if line.startswith("  -"):
            names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            flags.update(_OPTION.findall(names))
    return flags


def cli_reference(lines: list[str] | None = None) -> dict[str, set[str]]:
    """The generated CLI reference, by command: ``{"gitops-infra fleet report": {"--json", ...}}``."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in render_cli_reference() if lines is None else lines:
        heading = _HEADING.match(line)
        if heading:
            current = sections.setdefault(heading["command"], [])
        else:
            current.append(line)
    return {command: option_flags(_options_block(body)) for command, body in sections.items()}


def _options_block(body: list[str]) -> list[str]:
    """The lines of the code block after ``**Options:**``."""
    try:
        start = body.index("**Options:**")
    except ValueError:
        return []
    block: list[str] = []
    inside = False
    for line in body[start + 1 :]:
        if line.startswith("```"):
            if inside:
                break
            inside = True
        elif inside:
            block.append(line)
    return block
