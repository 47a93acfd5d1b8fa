"""The README and docs/ stay true to the code: the CLI reference is what the parser generates, every
`linerate ...` command shown in a code block parses with the current CLI (parsed, never run), every
relative link (and its #anchor) resolves, the README stays short, and no internal label reaches a
reader."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from linerate.cli import build_parser
from linerate.cli.reference import reference

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_BYTES = 15 * 1024
FENCE = re.compile(r"^```(\w*)\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def code_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, fence language, line) of every line inside a fenced code block."""
    out, language = [], None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line.strip())
        if match:
            language = None if language is not None else match.group(1)
            continue
        if language is not None:
            out.append((number, language, line))
    return out


def shown_commands(text: str) -> list[tuple[int, list[str]]]:
    """The linerate commands of a page's code blocks as argv (after `linerate`): `$ linerate ...` in
    any block, and bare `linerate ...` lines in sh blocks; comments dropped."""
    found = []
    for number, language, line in code_lines(text):
        command = line.strip()
        if command.startswith("$ "):
            command = command[2:]
        elif language not in ("sh", "bash", "shell"):
            continue
        command = re.sub(r"^(sudo |\.venv/bin/)+", "", command)
        if not command.startswith("linerate "):
            continue
        words = shlex.split(command, comments=True)
        for stop in (">", "|", "&&", ";"):
            if stop in words:
                words = words[:words.index(stop)]
        found.append((number, words[1:]))
    return found


def every_command() -> list[tuple[str, list[str]]]:
    return [(f"{page.relative_to(ROOT)}:{number}", argv) for page in PAGES
            for number, argv in shown_commands(page.read_text(encoding="utf-8"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    inside = {number for number, _, _ in code_lines(text)}
    return {slug(line.lstrip("#")) for number, line in enumerate(text.splitlines(), 1)
            if line.startswith("#") and number not in inside}


def test_the_cli_reference_page_is_what_the_parser_generates():
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == reference(build_parser()), (
        "docs/cli.md differs from the parser: run `.venv/bin/python -m linerate.cli.reference > docs/cli.md`")


def test_the_docs_show_linerate_commands():
    assert len(every_command()) >= 30  # the extractor still finds the examples


@pytest.mark.parametrize("where,argv", every_command(), ids=lambda value: value if isinstance(value, str) else "")
def test_every_command_shown_in_the_docs_parses(where, argv, capsys):
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit as exc:
        error = capsys.readouterr().err.strip()
        assert exc.code == 0, f"{where}: `linerate {shlex.join(argv)}` does not parse: {error}"


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_is_short_and_maps_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= README_MAX_BYTES
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", readme))
    assert {page.name for page in (ROOT / "docs").glob("*.md")} - {"index.md"} <= linked


def test_no_internal_research_labels_reach_a_reader():
    label = re.compile(r"seed ?00\d|seed00\d", re.IGNORECASE)
    files = [*PAGES, *(ROOT / "examples").rglob("*"), *(ROOT / "tools").rglob("*.py"),
             *(ROOT / "src" / "linerate").rglob("*"), *(ROOT / "tests").rglob("*")]
    found = [f"{path.relative_to(ROOT)}" for path in files if path.is_file() and "__pycache__" not in path.parts
             and (label.search(path.name) or label.search(path.read_text(encoding="utf-8", errors="replace")))]
    assert found == []
