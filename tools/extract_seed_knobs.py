"""Maintainer tool: list the knobs that seed 003's loader.conf / sysctl.conf blocks mention but the
catalog lacks, as catalog TOML built only from what the seed itself says (name, where, value type,
"(default X)" when the seed gives one, the comment as description, the line as source).
Run: .venv/bin/python tools/extract_seed_knobs.py ../shared/seeds/003_*.txt > NEW.toml, then review."""

from __future__ import annotations

import json
import re
import sys

from linerate.tuning.catalog import load_catalog

LINE = re.compile(r'^#?\s*([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+|[a-z0-9_]+_load)\s*=\s*"?([^"#\s]*)"?\s*(#\s*(.*))?$')
SEED_VERSION = "12.1"  # seed 003's author ran FreeBSD 12.1-RELEASE (its benchmark section)


def blocks(text: str) -> list[tuple[str, list[str]]]:
    lines = text.splitlines()
    ends = [i for i, line in enumerate(lines) if line.strip() == "### EOF ###"]
    starts = [i for i, line in enumerate(lines) if line.startswith("The /boot/loader.conf") and "is where" not in line]
    loader_start = starts[0] if starts else 0
    return [("loader", lines[loader_start:ends[0]]), ("sysctl", lines[ends[0]:ends[1]])]


def main(path: str) -> None:
    catalog = load_catalog()
    seen: set[str] = set()
    for location, lines in blocks(open(path, encoding="utf-8").read()):
        for line in lines:
            match = LINE.match(line.strip())
            if not match:
                continue
            name = re.sub(r"\.\d+\.", ".N.", match.group(1))
            if name in seen or catalog.find(name, "freebsd") or catalog.find(match.group(1), "freebsd"):
                continue
            seen.add(name)
            value, comment = match.group(2), (match.group(4) or "").strip()
            default = re.search(r"\(default\s+([^,)\s]+)", comment)
            is_module = name.endswith("_load")
            kind = "string" if is_module or not re.fullmatch(r"-?\d+", value) else "int"
            print("[[knob]]")
            print(f"name = {json.dumps(name)}")
            print('os = "freebsd"')
            print(f'location = "{"loader" if is_module else location}"')
            print(f'type = "{kind}"')
            if is_module:
                print('choices = ["YES", "NO"]')
            fallback = "kernel module loaded at boot" if is_module else f"listed in seed 003's {location}.conf without a comment"
            print(f"description = {json.dumps(comment or fallback)}")
            print(f"defaults = {{ {json.dumps(SEED_VERSION)} = {json.dumps(default.group(1))} }}" if default
                  else "defaults = {}")
            print(f"sources = [{json.dumps(f'seed 003: {location}.conf line ' + repr(line.strip()[:120]))}]")
            print()


if __name__ == "__main__":
    main(sys.argv[1])
