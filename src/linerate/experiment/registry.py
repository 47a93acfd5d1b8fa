"""The test-kind registry: a kind's name -> the module path of its package (kinds/<kind>/), imported
when the kind is used — a plug-in table, like an entry-points table. Adding a kind is its folder
plus one line in KINDS.

It lives here, below the experiment file model, because experiment/config.py checks `test = "..."`
against these names, and because the runner, report/ and cli/ find a kind through it without
importing kinds/ (the kinds sit above the runner that hosts them: experiment/plugins.py is the seam
they plug into). Anyone may import this module; it imports nothing of linerate's.
"""

from __future__ import annotations

import importlib
from typing import Any

KINDS = {
    "throughput": "linerate.kinds.throughput",
    "latency": "linerate.kinds.throughput",  # throughput with RTT probes in every cell
    "rfc2544": "linerate.kinds.rfc2544",
    "tune": "linerate.kinds.tune",
    "cps": "linerate.kinds.cps",
    "rfc9693": "linerate.kinds.rfc9693",
}
DEFAULT = "throughput"  # an experiment file without `test`, and a stored row of no known kind


def kind(name: str) -> Any:
    """The TestKind (experiment/plugins.py) called `name` (KeyError for a name not in KINDS)."""
    return importlib.import_module(KINDS[name]).KIND


def kind_name_of(experiment_row: Any) -> str:
    """A stored experiment's kind: its config's `test`; older `linerate rfc2544` rows, which stored
    no `test`, name it in the row's label (its `kind` column)."""
    config = experiment_row.config if isinstance(experiment_row.config, dict) else {}
    name = config.get("test") or experiment_row.kind
    return name if name in KINDS else DEFAULT


def kind_of(experiment_row: Any) -> Any:
    return kind(kind_name_of(experiment_row))
