"""A database at a known schema version can still be damaged by hand or by another program: a table
dropped, a column renamed, text where linerate stores numbers or JSON. Checked once when it is opened,
so a damaged file is refused with one line naming what is wrong (exit 2), and left alone — never a
traceback from deep in a report, never an ALTER TABLE on a file that is not what linerate wrote."""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from linerate.errors import ConfigError
from linerate.store import schema

# columns that hold JSON documents (linerate writes them with json.dumps)
JSON_COLUMNS = {"experiments": ("config", "environment"), "cells": ("params",), "lab_states": ("state",),
                "trials": ("flags", "argv", "dut_counters", "telemetry"), "calibrations": ("environment",),
                "searches": ("params", "results"), "search_trials": ("dut_counters", "argv")}


@lru_cache(maxsize=1)
def reference() -> dict[str, dict[str, str]]:
    """table -> column -> declared type, as the migrations build them on an empty database."""
    conn = sqlite3.connect(":memory:")
    try:
        for steps in schema.MIGRATIONS:
            for step in steps:
                step(conn) if callable(step) else conn.execute(step)
        return {table: {row[1]: row[2] for row in conn.execute(f"PRAGMA table_info({table})")}
                for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


def check_structure(conn: sqlite3.Connection, path: str) -> None:
    """Every table and column the migrations made is there (the trial columns sync adds aside)."""
    for table, columns in reference().items():
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not present:
            raise _damaged(path, f"it has no {table} table")
        missing = sorted(set(columns) - present - (set(schema.TRIAL_COLUMN_TYPES) if table == "trials" else set()))
        if missing:
            raise _damaged(path, f"its {table} table lacks the column(s) {', '.join(missing)}")


def check_values(conn: sqlite3.Connection, path: str) -> None:
    """Numbers where linerate stores numbers, JSON where it stores JSON."""
    for table, columns in reference().items():
        for column, declared in columns.items():
            if declared in ("REAL", "INTEGER"):
                bad = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) NOT IN "
                                   "('integer', 'real', 'null')").fetchone()[0]
                what = "text where it stores numbers"
            elif column in JSON_COLUMNS.get(table, ()):
                bad = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} IS NOT NULL AND "
                                   f"NOT json_valid({column})").fetchone()[0]
                what = "text that is not the JSON linerate writes"
            else:
                continue
            if bad:
                raise _damaged(path, f"{bad} row(s) of {table}.{column} hold {what}")


def _damaged(path: str, what: str) -> ConfigError:
    return ConfigError("--db", f"{path} is damaged: {what}; linerate leaves it as it is: use a copy from "
                       "before the damage, or another --db")
