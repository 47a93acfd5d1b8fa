"""Reports by (test kind, format): `export` finds a stored experiment's kind by its `test`
(experiment/registry.py, never importing kinds/) and asks it for the format. The throughput table
renders from report/ modules, one small module per format (as hyperfine's exporters:
`serializer(fmt)`); every other kind brings its renderers in its own folder (kinds/<kind>/)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from linerate.errors import ConfigError
from linerate.experiment.registry import kind_of

MODULES = {"md": "markdown", "csv": "csv_export", "json": "json_export"}
FORMATS = tuple(MODULES)


def serializer(name: str) -> Callable:
    return importlib.import_module(f"linerate.report.{MODULES[name]}").serialize


def export(store, experiment_ref, fmt: str) -> str:
    """The report of a stored experiment (name or id; None: the newest) in a format its kind gives."""
    row = store.experiment(experiment_ref)
    kind = kind_of(row)
    if fmt not in kind.formats:
        raise ConfigError("--format", f"{kind.name} experiments report as {', '.join(kind.formats)}")
    return kind.render(store, row, fmt)


def plot(store, experiment_ref, path: str) -> None:
    row = store.experiment(experiment_ref)
    kind_of(row).plot(store, row, path)
