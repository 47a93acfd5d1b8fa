"""Maintainer tool: list the knobs that the loader.conf / sysctl.conf blocks of Calomel.org, 'FreeBSD
Tuning and Optimization' (https://calomel.org/freebsd_network_tuning.html) mention but the catalog lacks, as catalog TOML built only from what the guide itself says (name, where,
value type, "(default X)" when the guide gives one, the comment as description, the line as source).
Run: .venv/bin/python tools/extract_calomel_knobs.py GUIDE.txt > NEW.toml (GUIDE.txt: the article's
text, saved from the page), then review; the reviewed result is
src/linerate/tuning/catalog/freebsd_calomel_guide.toml."""

from __future__ import annotations

import json
import re
import sys

from linerate.tuning.catalog import load_catalog

LINE = re.compile(r'^#?\s*([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+|[a-z0-9_]+_load)\s*=\s*"?([^"#\s]*)"?\s*(#\s*(.*))?$')
GUIDE_VERSION = "12.1"  # the guide's author ran FreeBSD 12.1-RELEASE (its benchmark section)
GUIDE = "Calomel.org, 'FreeBSD Tuning and Optimization' (https://calomel.org/freebsd_network_tuning.html)"


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
            fallback = ("kernel module loaded at boot" if is_module else
                        f"listed in Calomel.org's 'FreeBSD Tuning and Optimization' "
                        f"(https://calomel.org/freebsd_network_tuning.html) {location}.conf without a comment")
            print(f"description = {json.dumps(comment or fallback)}")
            print(f"defaults = {{ {json.dumps(GUIDE_VERSION)} = {json.dumps(default.group(1))} }}" if default
                  else "defaults = {}")
            print(f"sources = [{json.dumps(f'{GUIDE}: {location}.conf line ' + repr(line.strip()[:120]))}]")
            print()


if __name__ == "__main__":
    main(sys.argv[1])
