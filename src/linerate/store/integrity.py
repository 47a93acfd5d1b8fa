"""A database at a known schema version can still be damaged by hand or by another program: a table
dropped, a column renamed, text where linerate stores numbers or JSON. Checked once when it is opened,
so a damaged file is refused with one line naming what is wrong (exit 2), and left alone — never a
traceback from deep in a report, never an ALTER TABLE on a file that is not what linerate wrote."""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from linerate.errors import ConfigError
from linerate.store import schema

# columns that hold JSON documents (linerate writes them with json.dumps), and the JSON type of each
JSON_COLUMNS = {"experiments": {"config": "object", "environment": "object"}, "cells": {"params": "object"},
                "lab_states": {"state": "object"},
                "trials": {"flags": "array", "argv": "array", "dut_counters": "object", "telemetry": "object"},
                "calibrations": {"environment": "object"},
                "searches": {"params": "object", "goals": "array", "results": "object"},
                "search_trials": {"dut_counters": "object", "argv": "array"},
                "cps_trials": {"timings": "object", "request_percentiles": "object", "capture": "object",
                               "status": "object", "limits": "array", "client_before": "object",
                               "client_after": "object", "notes": "array", "state_before": "object",
                               "state_after": "object", "state_timeouts": "object"},
                "rfc9693_trials": {"state_before": "object", "state_between": "object", "state_after": "object"},
                "tune_state": {"axes": "array", "candidates": "array"},
                "tune_decisions": {"best": "object", "cell": "object"}}


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
    """Every table and column the migrations made is there, and nothing runs behind linerate's back
    (linerate makes no trigger or view: one would change or fail what linerate writes)."""
    for table, columns in reference().items():
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not present:
            raise _damaged(path, f"it has no {table} table")
        missing = sorted(set(columns) - present)
        if missing:
            raise _damaged(path, f"its {table} table lacks the column(s) {', '.join(missing)}")
    extra = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY name").fetchall()
    if extra:
        raise _damaged(path, "it holds " + ", ".join(f"{kind} {name}" for kind, name in extra) +
                       " that linerate did not make")


def check_values(conn: sqlite3.Connection, path: str) -> None:
    """Numbers where linerate stores numbers, JSON of the right kind (object or list) where it stores JSON."""
    for table, columns in reference().items():
        for column, declared in columns.items():
            if declared in ("REAL", "INTEGER"):
                bad = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) NOT IN "
                                   f"('integer', 'real', 'null') OR abs({column}) > 1.7e308").fetchone()[0]
                what = "text or an infinite value where it stores numbers"
            elif column in JSON_COLUMNS.get(table, {}):
                kind = JSON_COLUMNS[table][column]
                bad = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} IS NOT NULL AND (CASE WHEN "
                                   f"json_valid({column}) THEN json_type({column}) END IS NOT '{kind}')").fetchone()[0]
                what = f"text that is not the JSON {kind} linerate writes"
            else:
                continue
            if bad:
                raise _damaged(path, f"{bad} row(s) of {table}.{column} hold {what}")


def _damaged(path: str, what: str) -> ConfigError:
    return ConfigError("--db", f"{path} is damaged: {what}; linerate leaves it as it is: use a copy from "
                       "before the damage, or another --db")
