"""Test kinds: what a run measures and how it reports it. Each kind is a folder here whose package
exposes `KIND` (a kinds.base.TestKind: check its experiment file, run under the one runner in
experiment/run.py, render its reports). Adding a kind is its folder plus one line in KINDS.

KINDS maps names to module paths, imported when a kind is used: the experiment file model
(experiment/config.py) checks `test = "..."` against these names without importing every kind and
what it runs on — a plug-in registry, like an entry-points table.
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


def kind(name: str) -> Any:
    """The TestKind called `name` (KeyError for a name not in KINDS)."""
    return importlib.import_module(KINDS[name]).KIND


def kind_name_of(experiment_row: Any) -> str:
    """A stored experiment's kind: its config's `test` (older `linerate rfc2544` rows: the row's kind)."""
    config = experiment_row.config if isinstance(experiment_row.config, dict) else {}
    name = config.get("test") or ("rfc2544" if experiment_row.kind == "rfc2544" else "throughput")
    return name if name in KINDS else "throughput"


def kind_of(experiment_row: Any) -> Any:
    return kind(kind_name_of(experiment_row))
