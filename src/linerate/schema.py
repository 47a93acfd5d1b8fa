"""The version of every JSON document linerate prints or writes (`--json`, `report --format json`), so
a script can tell when a field changed meaning.

Every document is an object whose first key is "schema_version". The number goes up when a field is
renamed, removed, or changes meaning or unit; a new field does not change it. Version 1: the first
versioned documents (the former top-level lists of `audit`, `calc --rfc2544` and `doctor` became
objects: {"findings": [...]}, {"frames": [...]}, {"checks": [...]}).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SCHEMA_VERSION = 1


def versioned(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`doc` with "schema_version" as its first key."""
    return {"schema_version": SCHEMA_VERSION, **doc}


def dumps(doc: Mapping[str, Any], *, indent: int | None = 2, **options: Any) -> str:
    """The JSON text of a versioned `doc` (json.dumps options pass through; no trailing newline)."""
    return json.dumps(versioned(doc), indent=indent, **options)
