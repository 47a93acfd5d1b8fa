"""Store: every experiment, cell and trial, committed the moment each trial ends (WAL mode), so a
killed run loses at most the trial that was in flight."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linerate.errors import ConfigError
from linerate.model import Trial
from linerate.store.schema import MIGRATIONS

TRIAL_FIELDS = ("throughput_bps", "sender_bps", "reverse_throughput_bps", "retransmits", "cpu_local_pct",
                "cpu_remote_pct", "lost_percent", "jitter_ms", "congestion", "iperf3_version")


def default_db_path() -> str:
    return os.environ.get("LINERATE_DB") or "linerate.db"


def cell_key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class ExperimentRow:
    id: int
    name: str
    kind: str
    status: str
    seed: int | None
    started_at: float
    ended_at: float | None
    config: dict
    environment: dict
    file_text: str | None
    config_hash: str | None


class Store:
    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = str(path or default_db_path())
        parent = Path(self.path).parent
        if not parent.is_dir():
            raise ConfigError("--db", f"directory {parent} does not exist")
        try:
            self.conn = sqlite3.connect(self.path, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            raise ConfigError("--db", f"{self.path} is not a linerate database ({exc})") from None
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.migrate()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        version = self.schema_version
        if version > len(MIGRATIONS):
            raise ConfigError("--db", f"{self.path} has schema {version}, newer than this linerate "
                              f"({len(MIGRATIONS)}); upgrade linerate")
        for index in range(version, len(MIGRATIONS)):
            with self.conn:
                self.conn.executescript(MIGRATIONS[index])
                self.conn.execute(f"PRAGMA user_version = {index + 1}")

    # --- experiments -----------------------------------------------------------------------------

    def create_experiment(self, name: str, kind: str, config: dict, *, file_text: str | None = None,
                          config_hash: str | None = None, seed: int | None = None,
                          environment: dict | None = None) -> int:
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO experiments (name, kind, file_text, config, config_hash, seed, environment, "
                "started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (name, kind, file_text, json.dumps(config), config_hash, seed,
                 json.dumps(environment or {}), time.time()))
        return int(cur.lastrowid)

    def finish_experiment(self, experiment_id: int, status: str = "done") -> None:
        with self.conn:
            self.conn.execute("UPDATE experiments SET status=?, ended_at=? WHERE id=?",
                              (status, time.time(), experiment_id))

    def set_environment(self, experiment_id: int, environment: dict) -> None:
        with self.conn:
            self.conn.execute("UPDATE experiments SET environment=? WHERE id=?",
                              (json.dumps(environment), experiment_id))

    def _row(self, row: sqlite3.Row) -> ExperimentRow:
        return ExperimentRow(row["id"], row["name"], row["kind"], row["status"], row["seed"], row["started_at"],
                             row["ended_at"], json.loads(row["config"]), json.loads(row["environment"]),
                             row["file_text"], row["config_hash"])

    def experiments(self) -> list[ExperimentRow]:
        return [self._row(r) for r in self.conn.execute("SELECT * FROM experiments ORDER BY id")]

    def experiment(self, ref: str | int | None) -> ExperimentRow:
        """By id, by name (the newest of that name), or the newest of all when ref is None."""
        if ref is None:
            row = self.conn.execute("SELECT * FROM experiments ORDER BY id DESC LIMIT 1").fetchone()
        elif str(ref).isdigit():
            row = self.conn.execute("SELECT * FROM experiments WHERE id=?", (int(ref),)).fetchone()
        else:
            row = self.conn.execute("SELECT * FROM experiments WHERE name=? ORDER BY id DESC LIMIT 1",
                                    (str(ref),)).fetchone()
        if row is None:
            what = "no experiments stored yet" if ref is None else f"no experiment '{ref}'"
            raise ConfigError("experiment", f"{what} in {self.path}; see `linerate list`")
        return self._row(row)

    def resumable(self, name: str, config_hash: str) -> ExperimentRow | None:
        row = self.conn.execute(
            "SELECT * FROM experiments WHERE name=? AND kind='run' AND status!='done' "
            "ORDER BY id DESC LIMIT 1", (name,)).fetchone()
        if row is None:
            return None
        found = self._row(row)
        if found.config_hash != config_hash:
            raise ConfigError("--resume", f"experiment '{name}' (id {found.id}) was started from a different "
                              "file; run without --resume to start afresh")
        return found

    # --- cells and trials --------------------------------------------------------------------------

    def ensure_cells(self, experiment_id: int, cells: Iterable[dict[str, Any]]) -> dict[str, int]:
        with self.conn:
            for params in cells:
                self.conn.execute("INSERT OR IGNORE INTO cells (experiment_id, key, params) VALUES (?, ?, ?)",
                                  (experiment_id, cell_key(params), json.dumps(params)))
        return {r["key"]: r["id"] for r in self.conn.execute(
            "SELECT id, key FROM cells WHERE experiment_id=?", (experiment_id,))}

    def completed_repetitions(self, experiment_id: int) -> dict[int, int]:
        """cell id -> number of repetitions with a final result (ok, or failed after all retries)."""
        rows = self.conn.execute(
            "SELECT t.cell_id, COUNT(DISTINCT t.repetition) FROM trials t JOIN cells c ON c.id=t.cell_id "
            "WHERE c.experiment_id=? AND t.final=1 GROUP BY t.cell_id", (experiment_id,))
        return {cell: count for cell, count in rows}

    def ok_throughputs(self, cell_id: int) -> list[float]:
        return [r[0] for r in self.conn.execute(
            "SELECT throughput_bps FROM trials WHERE cell_id=? AND status='ok' ORDER BY id", (cell_id,))]

    def add_trial(self, cell_id: int, repetition: int, attempt: int, trial: Trial, *, final: bool,
                  flags: Iterable[str] = (), started_at: float | None = None, lab_state: dict | None = None) -> int:
        values = [getattr(trial, name) for name in TRIAL_FIELDS]
        with self.conn:  # one transaction per trial: committed the moment it ends
            cur = self.conn.execute(
                f"INSERT INTO trials (cell_id, repetition, attempt, status, final, error, {', '.join(TRIAL_FIELDS)}, "
                "flags, argv, dut_counters, raw, started_at, ended_at, lab_state_id) VALUES "
                f"(?, ?, ?, ?, ?, ?, {', '.join('?' * len(TRIAL_FIELDS))}, ?, ?, ?, ?, ?, ?, ?)",
                (cell_id, repetition, attempt, trial.status, int(final), trial.error, *values,
                 json.dumps(list(flags)), json.dumps(list(trial.argv)), json.dumps(trial.dut_counters),
                 trial.raw, started_at, time.time(), self._lab_state_id(lab_state)))
        return int(cur.lastrowid)

    def _lab_state_id(self, state: dict | None) -> int | None:
        """Every trial of a lab shares one read-back state: store it once, refer to it by id."""
        if not state:
            return None
        text = json.dumps(state, sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        self.conn.execute("INSERT OR IGNORE INTO lab_states (digest, state) VALUES (?, ?)", (digest, text))
        return self.conn.execute("SELECT id FROM lab_states WHERE digest=?", (digest,)).fetchone()[0]

    def cell_rows(self, experiment_id: int) -> list[sqlite3.Row]:
        return list(self.conn.execute("SELECT id, key, params FROM cells WHERE experiment_id=? ORDER BY id",
                                      (experiment_id,)))

    def trial_rows(self, experiment_id: int) -> list[sqlite3.Row]:
        return list(self.conn.execute(
            "SELECT t.cell_id, t.status, t.final, t.throughput_bps, t.retransmits, t.cpu_local_pct, "
            "t.cpu_remote_pct, t.flags FROM trials t JOIN cells c ON c.id=t.cell_id "
            "WHERE c.experiment_id=? ORDER BY t.cell_id, t.id", (experiment_id,)))

    def integrity_ok(self) -> bool:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
