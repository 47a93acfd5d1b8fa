"""Format name -> serializer. One small module per format (as hyperfine's exporters), imported
only when that format is asked for."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable

MODULES = {"md": "markdown", "csv": "csv_export", "json": "json_export"}
FORMATS = tuple(MODULES)


def serializer(name: str) -> Callable:
    return importlib.import_module(f"linerate.report.{MODULES[name]}").serialize


def write_file(path: str, text: str) -> None:
    """Whole or nothing: written beside the target, then renamed over it."""
    import os
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    fd, scratch = tempfile.mkstemp(dir=directory, prefix=".linerate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(scratch, 0o644)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise
