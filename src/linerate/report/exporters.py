"""Format name -> serializer. One small module per format (as hyperfine's exporters), imported
only when that format is asked for."""

from __future__ import annotations

import importlib
from collections.abc import Callable

MODULES = {"md": "markdown", "csv": "csv_export", "json": "json_export"}
FORMATS = tuple(MODULES)


def serializer(name: str) -> Callable:
    return importlib.import_module(f"linerate.report.{MODULES[name]}").serialize


def write_file(path: str, text: str, option: str = "--output") -> int:
    """By report/output.py's rule: whole or nothing for files, written into devices and FIFOs."""
    from linerate.report import output

    return output.write(path, text, option)
