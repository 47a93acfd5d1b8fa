"""Store: every experiment, cell and trial, committed the moment each trial ends (WAL mode), so a
killed run loses at most the trial that was in flight. The only module that speaks SQL.

Opening is careful because the path comes from the user: `:memory:` (an import would vanish),
special files (a FIFO would hang, /dev/zero never ends), another program's SQLite file and a
database from a newer linerate are all refused *before anything is written* — the file is first
inspected through a read-only connection. All pending migrations then run in one transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linerate.errors import ConfigError
from linerate.model import TRIAL_COLUMNS, Trial
from linerate.numbers import ascii_int, is_ascii_int
from linerate.process import ProcessRef, this_host
from linerate.safepath import absolute, others_may_write, untrusted_component
from linerate.store import integrity, schema
from linerate.store.schema import APPLICATION_ID, KIND_TABLES, KNOWN_TABLES, cell_key

SQLITE_MAGIC = b"SQLite format 3\x00"
LEGACY_VERSIONS = (1, 2)
UNWRITABLE = ("readonly", "read-only", "unable to open", "disk I/O error", "not authorized", "cannot open",
              "disk is full")  # linerate databases from before application_id was set


# every results database this process opened: a report, plot or export written over one (or its -wal) would
# destroy what it was made from
OPENED: set[str] = set()


def database_files(path: str) -> list[str]:
    """The database file and the sidecars SQLite keeps beside it."""
    return [path, path + "-wal", path + "-shm", path + "-journal"]


def default_db_path() -> str:
    return os.environ.get("LINERATE_DB") or "linerate.db"


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


def _kind_columns(table: str) -> dict[str, str]:
    """column -> declared type of a table a test kind owns (schema.KIND_TABLES)."""
    if table not in KIND_TABLES:
        raise ValueError(f"{table} is not a kind's table")
    return integrity.reference()[table]


def _encoded(columns: dict[str, str], values: dict[str, Any]) -> dict[str, Any]:
    """The non-null values for their columns, JSON columns as JSON text; a name the table lacks is an error."""
    assert set(values) <= set(columns), set(values) - set(columns)  # the kind and its table agree
    return {name: json.dumps(value) if columns[name] == "JSON" else value
            for name, value in values.items() if value is not None}


def _decoded(columns: dict[str, str], row: sqlite3.Row) -> dict[str, Any]:
    """A row of a kind's table: JSON columns decoded, NULL columns left out (absent, as never written)."""
    return {name: json.loads(row[name]) if columns[name] == "JSON" else row[name]
            for name in columns if row[name] is not None}


def _refuse_shared_folder(path: str) -> None:
    """A results database lives in a folder only its owner can write: SQLite makes and opens its -wal,
    -shm and -journal beside it, by name, while it runs, and in /tmp another user could put a file of
    theirs under one of those names in between (root's results in their file)."""
    for where in {absolute(path), os.path.realpath(path)}:  # beside the name, and beside a link's target
        try:
            folder = os.stat(os.path.dirname(where) or "/")
        except OSError:
            continue  # a missing folder: the checks below say so
        if others_may_write(folder):
            raise ConfigError("--db", f"{path[:200]} is in a folder other users can write (such as /tmp): SQLite's "
                              "files beside the database could be theirs; give a path in a folder of yours")


def _check_path(path: str, create: bool) -> bool:
    """Refuse what cannot be a linerate database file. True when the file exists with content."""
    if path == ":memory:" or path.startswith("file:") or path == "" or "\x00" in path:
        raise ConfigError("--db", f"'{path[:100]}' is not a file path; give a database file such as linerate.db")
    steered = untrusted_component(path)
    if steered is not None:
        raise ConfigError("--db", f"{steered}; give a path through folders only you (or root) can write")
    _refuse_shared_folder(path)
    try:
        if os.path.islink(path) and not os.path.exists(path):
            raise ConfigError("--db", f"{path} is a symbolic link to a file that does not exist; give the "
                              "target's path (linerate does not create files through links)")
        info = os.stat(path)
    except FileNotFoundError:
        parent = Path(path).parent
        if not parent.is_dir():
            raise ConfigError("--db", f"directory {parent} does not exist") from None
        if not create:
            raise ConfigError("--db", f"no database at {path}; run an experiment first or pass --db") from None
        return False
    except OSError as exc:
        raise ConfigError("--db", f"cannot use {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError("--db", f"{path} is not a regular file; give a database file such as linerate.db")
    if not create and info.st_size == 0:  # SQLite takes an empty file for an empty database: a look writes none
        raise ConfigError("--db", f"{path} is empty: no experiments there yet; run an experiment first, or give the "
                                  "database one wrote")
    try:  # an immutable (chattr +i) or read-only file: refused before SQLite makes -wal/-shm beside it
        os.close(os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as exc:
        raise ConfigError("--db", f"{path} cannot be written ({exc.strerror}); give a database file "
                          "linerate may change") from None
    return info.st_size > 0


def check_db(path: str, create: bool = True) -> bool:
    """Everything Store() checks before writing, without writing (for --dry-run): a path that
    cannot be a linerate database raises ConfigError. True when a database exists there."""
    exists = _check_path(path, create)
    if exists:
        _inspect(path)
    return exists


def _remove_new(paths: Iterable[str], existed: set[str]) -> None:
    for extra in paths:
        if extra not in existed:
            with contextlib.suppress(OSError):
                os.unlink(extra)


def _inspect(path: str) -> None:
    """Read-only look at an existing file: is it linerate's, and not newer than this version?"""
    with open(path, "rb") as handle:
        header = handle.read(100)
    if not header.startswith(SQLITE_MAGIC):
        raise ConfigError("--db", f"{path} is not an SQLite database; give a linerate database or a new path")
    # Without a -wal file everything is in the main file, and immutable=1 reads it without creating
    # a -shm file; with one, a read-only connection is needed to see the WAL's pages.
    mode = "mode=ro" if os.path.exists(path + "-wal") else "immutable=1"
    uri = f"file:{urllib.parse.quote(absolute(path))}?{mode}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30)
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise ConfigError("--db", f"{path} cannot be read as SQLite ({exc})") from None
    ours = (app_id == APPLICATION_ID or (app_id == 0 and version in LEGACY_VERSIONS and
                                         {"experiments", "cells", "trials"} <= tables))
    if app_id == 0 and version == 0 and not tables:
        return  # an empty SQLite file: fine to initialise
    if not ours or not tables <= KNOWN_TABLES | {"sqlite_sequence"}:
        raise ConfigError("--db", f"{path} is an SQLite database of another program (application_id {app_id}, "
                          f"tables {', '.join(sorted(tables)) or 'none'}); linerate will not change it")
    if version > len(schema.MIGRATIONS):
        raise ConfigError("--db", f"{path} has schema {version}, newer than this linerate ({len(schema.MIGRATIONS)}); "
                          "upgrade linerate")
    if version < 1 and tables:  # tables, but a schema version no linerate writes: migrating would break it
        raise ConfigError("--db", f"{path} has tables but schema version {version}, which no linerate writes; "
                          "linerate will not change it (give another --db)")


def unwritable(exc: BaseException) -> bool:
    """An SQLite error that says the database cannot be written now (full disk, read-only), not a bug."""
    return isinstance(exc, sqlite3.OperationalError) and any(word in str(exc) for word in UNWRITABLE)


class Store:
    def __init__(self, path: str | os.PathLike[str] | None = None, *, create: bool = True):
        self.path = str(path if path is not None else default_db_path())
        OPENED.add(absolute(self.path))  # never an output file of this process (report/output.py)
        existed_before = _check_path(self.path, create)
        if existed_before:
            _inspect(self.path)
        sidecars = database_files(self.path)
        existed = {p for p in sidecars if os.path.lexists(p)}
        self.conn = None
        try:
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.migrate()
        except sqlite3.DatabaseError as exc:
            if self.conn is not None:
                self.conn.close()
            _remove_new(sidecars, existed)  # leave nothing beside it that was not there before
            if not isinstance(exc, sqlite3.OperationalError) or not any(
                    word in str(exc) for word in UNWRITABLE):
                raise  # a bug (a broken migration): keep its traceback
            raise ConfigError("--db", f"{self.path} cannot be used ({str(exc)[:120]}); give a database "
                              "file linerate may write, in a directory it may write") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on any error): the write lock is taken up front."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        """Every pending migration, and the trial columns, in one transaction."""
        with self.transaction():
            version = self.schema_version  # read under the write lock: two openers cannot both migrate
            if version > len(schema.MIGRATIONS):
                raise ConfigError("--db", f"{self.path} has schema {version}, newer than this linerate "
                                  f"({len(schema.MIGRATIONS)}); upgrade linerate")
            for index in range(version, len(schema.MIGRATIONS)):
                for step in schema.MIGRATIONS[index]:
                    step(self.conn) if callable(step) else self.conn.execute(step)
            if version < len(schema.MIGRATIONS):
                self.conn.execute(f"PRAGMA user_version = {len(schema.MIGRATIONS)}")
            integrity.check_structure(self.conn, self.path)
            if version:  # a file that existed: what it holds is what linerate wrote
                integrity.check_values(self.conn, self.path)

    # --- run locks -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def run_lock(self, name: str) -> Iterator[None]:
        """One live run (or resume) per experiment name and database. A lock whose holder died (even
        by SIGKILL) is taken over; a live holder is named, with its pid."""
        me = ProcessRef.me()
        with self.transaction():
            row = self.conn.execute("SELECT pid, start_time, host, acquired_at FROM run_locks WHERE name=?",
                                    (name,)).fetchone()
            if row is not None and row["host"] == this_host() and ProcessRef(row["pid"], row["start_time"]).alive() \
                    and row["pid"] != me.pid:
                since = time.strftime("%H:%M:%S", time.localtime(row["acquired_at"]))
                raise ConfigError("experiment", f"'{name}' is being run by pid {row['pid']} (since {since}) "
                                  f"with {self.path}; wait for it to finish or stop it")
            if row is not None and row["host"] != this_host():
                raise ConfigError("experiment", f"'{name}' is locked by host {row['host']} pid {row['pid']} in "
                                  f"{self.path}; run it there, or remove the lock with that host down")
            self.conn.execute("INSERT OR REPLACE INTO run_locks (name, pid, start_time, host, acquired_at) "
                              "VALUES (?, ?, ?, ?, ?)", (name, me.pid, me.start_time, this_host(), time.time()))
        try:
            yield
        finally:
            with self.transaction():
                self.conn.execute("DELETE FROM run_locks WHERE name=? AND pid=?", (name, me.pid))

    # --- experiments -----------------------------------------------------------------------------

    def create_experiment(self, name: str, kind: str, config: dict, *, file_text: str | None = None,
                          config_hash: str | None = None, seed: int | None = None,
                          environment: dict | None = None) -> int:
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO experiments (name, kind, file_text, config, config_hash, seed, environment, "
                "started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (name, kind, file_text, json.dumps(config), config_hash, seed,
                 json.dumps(environment or {}), time.time()))
        return int(cur.lastrowid)

    def finish_experiment(self, experiment_id: int, status: str = "done") -> None:
        with self.transaction():
            self.conn.execute("UPDATE experiments SET status=?, ended_at=? WHERE id=?",
                              (status, time.time(), experiment_id))

    def drop_unmeasured(self, experiment_id: int) -> bool:
        """Remove an experiment that holds no measured trial of any kind (a run that stopped before its
        first trial: nothing to resume, nothing to report), with its rows; False, nothing removed, when
        it holds one."""
        with self.transaction():
            measured = self.conn.execute(
                "SELECT EXISTS(SELECT 1 FROM trials t JOIN cells c ON c.id = t.cell_id WHERE c.experiment_id=?) OR "
                "EXISTS(SELECT 1 FROM search_trials t JOIN searches s ON s.id = t.search_id WHERE s.experiment_id=?)",
                (experiment_id, experiment_id)).fetchone()[0]
            if not measured:
                self.conn.execute("DELETE FROM experiments WHERE id=?", (experiment_id,))
        return not measured

    def set_environment(self, experiment_id: int, environment: dict) -> None:
        with self.transaction():
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
        elif is_ascii_int(str(ref)) and len(str(ref)) < 19:
            row = self.conn.execute("SELECT * FROM experiments WHERE id=?", (int(ref),)).fetchone()
        else:
            row = self.conn.execute("SELECT * FROM experiments WHERE name=? ORDER BY id DESC LIMIT 1",
                                    (str(ref),)).fetchone()
        if row is None:
            what = "no experiments stored yet" if ref is None else f"no experiment {str(ref)[:100]!r}"
            raise ConfigError("experiment", f"{what} in {self.path}; see `linerate list`")
        return self._row(row)

    def unfinished(self, name: str, kind: str = "run") -> list[ExperimentRow]:
        """The newest run of `name` started this way, when it did not finish (killed: 'running'
        forever; stopped: 'interrupted'); what `--resume` would continue."""
        row = self.conn.execute(
            "SELECT * FROM experiments WHERE name=? AND kind=? ORDER BY id DESC LIMIT 1", (name, kind)).fetchone()
        return [self._row(row)] if row is not None and row["status"] != "done" else []

    def resumable(self, name: str, config_hash: str, file_text: str | None = None,
                  kind: str = "run") -> ExperimentRow | None:
        """The newest run of `name` started the same way (kind: run, rfc2544 ...; finished or not:
        resuming a finished run runs nothing), if it was started from the same experiment (same
        declared content, or byte-identical file)."""
        row = self.conn.execute(
            "SELECT * FROM experiments WHERE name=? AND kind=? ORDER BY id DESC LIMIT 1", (name, kind)).fetchone()
        if row is None:
            return None
        found = self._row(row)
        same_text = file_text is not None and found.file_text == file_text
        if found.config_hash != config_hash and not same_text:
            raise ConfigError("--resume", f"experiment '{name}' (id {found.id}) was started from a different "
                              "file; run without --resume to start afresh")
        return found

    # --- cells and trials --------------------------------------------------------------------------

    def ensure_cells(self, experiment_id: int, cells: Iterable[dict[str, Any]],
                     declared: list[str] | None = None) -> dict[str, int]:
        """cell key -> cell id, creating missing cells. Keys cover the declared axes (schema.cell_key)."""
        with self.transaction():
            for params in cells:
                self.conn.execute("INSERT OR IGNORE INTO cells (experiment_id, key, params) VALUES (?, ?, ?)",
                                  (experiment_id, cell_key(params, declared), json.dumps(params)))
        return {r["key"]: r["id"] for r in self.conn.execute(
            "SELECT id, key FROM cells WHERE experiment_id=?", (experiment_id,))}

    def completed_repetitions(self, experiment_id: int) -> dict[int, int]:
        """cell id -> number of repetitions with a final result (ok, or failed after all retries)."""
        rows = self.conn.execute(
            "SELECT t.cell_id, COUNT(DISTINCT t.repetition) FROM trials t JOIN cells c ON c.id=t.cell_id "
            "WHERE c.experiment_id=? AND t.final=1 GROUP BY t.cell_id", (experiment_id,))
        return {cell: count for cell, count in rows}

    def attempts_made(self, cell_id: int, repetition: int) -> int:
        """How many attempts of this repetition are stored (a run killed during a retry's backoff
        leaves non-final ones): a resumed run numbers its next attempt after them."""
        row = self.conn.execute("SELECT MAX(attempt) FROM trials WHERE cell_id=? AND repetition=?",
                                (cell_id, repetition)).fetchone()
        return int(row[0] or 0)

    def ok_throughputs(self, cell_id: int) -> list[float]:
        return [r[0] for r in self.conn.execute(
            "SELECT throughput_bps FROM trials WHERE cell_id=? AND status='ok' ORDER BY id", (cell_id,))]

    def add_trial(self, cell_id: int, repetition: int, attempt: int, trial: Trial, *, final: bool,
                  flags: Iterable[str] = (), started_at: float | None = None, lab_state: dict | None = None) -> int:
        values = [getattr(trial, name) for name in TRIAL_COLUMNS]
        with self.transaction():  # one transaction per trial: committed the moment it ends
            cur = self.conn.execute(
                f"INSERT INTO trials (cell_id, repetition, attempt, status, final, error, {', '.join(TRIAL_COLUMNS)}, "
                "flags, argv, dut_counters, telemetry, raw, started_at, ended_at, lab_state_id) VALUES "
                f"(?, ?, ?, ?, ?, ?, {', '.join('?' * len(TRIAL_COLUMNS))}, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cell_id, repetition, attempt, trial.status, int(final), trial.error, *values,
                 json.dumps(list(flags)), json.dumps(list(trial.argv)), json.dumps(trial.dut_counters),
                 json.dumps(trial.telemetry), trial.raw, started_at, time.time(), self._lab_state_id(lab_state)))
            trial_id = int(cur.lastrowid)
            self.conn.executemany("INSERT INTO trial_raw (trial_id, host, phase, text) VALUES (?, ?, ?, ?)",
                                  [(trial_id, host, phase, text) for host, phases in trial.telemetry_raw.items()
                                   for phase, text in phases.items()])
        return trial_id

    def trial_raw(self, trial_id: int) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for host, phase, text in self.conn.execute("SELECT host, phase, text FROM trial_raw WHERE trial_id=?",
                                                   (trial_id,)):
            out.setdefault(host, {})[phase] = text
        return out

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

    def trial_rows(self, experiment_id: int, trial_id: int | None = None) -> list[sqlite3.Row]:
        """Every trial of an experiment (or only the one with trial_id), in cell and store order."""
        columns = ", ".join(f"t.{name}" for name in TRIAL_COLUMNS)
        one = " AND t.id=?" if trial_id is not None else ""
        return list(self.conn.execute(
            f"SELECT t.id, t.cell_id, t.repetition, t.attempt, t.status, t.final, t.error, {columns}, t.flags, "
            "t.dut_counters, t.telemetry, t.started_at, t.ended_at, t.lab_state_id FROM trials t "
            f"JOIN cells c ON c.id=t.cell_id WHERE c.experiment_id=?{one} ORDER BY t.cell_id, t.id",
            (experiment_id,) + ((trial_id,) if trial_id is not None else ())))

    def _rows_by_id(self, table: str, column: str, ids: Iterable[int]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        for chunk, marks in _chunks(ids):
            out.update(self.conn.execute(f"SELECT id, {column} FROM {table} WHERE id IN ({marks})", chunk))
        return out

    def lab_states(self, ids: Iterable[int]) -> dict[int, dict]:
        """Read-back knob states by id (trials refer to them by lab_state_id)."""
        return {k: json.loads(v) for k, v in self._rows_by_id("lab_states", "state", ids).items()}

    def pair_texts(self, trial_ids: Iterable[int]) -> dict[int, dict[int, str]]:
        """trial id -> {pair number: its iperf3 -J text} for the pooled trials among them (pool/window.py keeps
        each pair's output as the trial's raw text "pairN")."""
        out: dict[int, dict[int, str]] = {}
        for chunk, marks in _chunks(trial_ids):
            for trial_id, host, text in self.conn.execute(
                    "SELECT trial_id, host, text FROM trial_raw WHERE phase='iperf3' AND host LIKE 'pair%' "
                    f"AND trial_id IN ({marks})", chunk):
                number = ascii_int(host.removeprefix("pair"))
                if number is not None and text:
                    out.setdefault(trial_id, {})[number] = text
        return out

    def trial_texts(self, trial_ids: Iterable[int]) -> dict[int, str]:
        """trial id -> the generator's raw output (iperf3 -J text), for the trials asked for only."""
        return {k: v or "" for k, v in self._rows_by_id("trials", "raw", trial_ids).items()}

    def recent_trial_timings(self, limit: int = 200) -> list[tuple[float, dict]]:
        """(wall seconds, cell params) of the newest ok trials: the ETA learns the overhead from them."""
        rows = self.conn.execute(
            "SELECT t.ended_at - t.started_at, c.params FROM trials t JOIN cells c ON c.id=t.cell_id "
            "WHERE t.started_at IS NOT NULL AND t.ended_at IS NOT NULL AND t.status='ok' "
            "ORDER BY t.id DESC LIMIT ?", (limit,))
        return [(float(wall), json.loads(params)) for wall, params in rows]

    # --- packet-rate searches (search/) ------------------------------------------------------------

    def ensure_search(self, experiment_id: int, params: dict, goals: list[dict], library: str) -> sqlite3.Row:
        """The search of these params in this experiment: the stored one (to resume), or a new one."""
        key = cell_key(params)
        with self.transaction():
            self.conn.execute("INSERT OR IGNORE INTO searches (experiment_id, key, params, goals, library, "
                              "started_at) VALUES (?, ?, ?, ?, ?, ?)",
                              (experiment_id, key, json.dumps(params), json.dumps(goals), library, time.time()))
        return self.conn.execute("SELECT * FROM searches WHERE experiment_id=? AND key=?",
                                 (experiment_id, key)).fetchone()

    def update_search(self, search_id: int, **values: Any) -> None:
        allowed = {"generator", "theoretical_fps", "generator_max_fps", "results", "status", "error", "ended_at"}
        assert set(values) <= allowed, set(values) - allowed
        encoded = {k: json.dumps(v) if k == "results" else v for k, v in values.items()}
        with self.transaction():
            self.conn.execute(f"UPDATE searches SET {', '.join(f'{k}=?' for k in encoded)} WHERE id=?",
                              (*encoded.values(), search_id))

    def searches(self, experiment_id: int) -> list[sqlite3.Row]:
        return list(self.conn.execute("SELECT * FROM searches WHERE experiment_id=? ORDER BY id", (experiment_id,)))

    def add_search_trial(self, search_id: int, seq: int, purpose: str, record: dict,
                         figures: tuple[str, dict[str, Any]] | None = None) -> int:
        """One measured search trial, committed the moment it ends (a resumed search replays these),
        with the kind's own figures of it (table, values: schema.FIGURE_TABLES) in the same transaction."""
        columns = ("intended_duration_s", "intended_load_fps", "intended_count", "sent", "forwarded", "dut_loss",
                   "unsent", "send_s", "started_at", "ended_at")
        with self.transaction():
            cur = self.conn.execute(
                f"INSERT INTO search_trials (search_id, seq, purpose, {', '.join(columns)}, dut_counters, argv) "
                f"VALUES (?, ?, ?, {', '.join('?' * len(columns))}, ?, ?)",
                (search_id, seq, purpose, *[record.get(c) for c in columns],
                 json.dumps(record.get("dut_counters") or {}), json.dumps([str(a) for a in record.get("argv") or ()])))
            trial_id = int(cur.lastrowid)
            if figures is not None:
                table, values = figures
                self._insert(table, {"search_trial_id": trial_id, **values})
        return trial_id

    def _insert(self, table: str, values: dict[str, Any], *, replace: bool = False) -> None:
        encoded = _encoded(_kind_columns(table), values)
        self.conn.execute(f"INSERT {'OR REPLACE ' if replace else ''}INTO {table} ({', '.join(encoded)}) "
                          f"VALUES ({', '.join('?' * len(encoded))})", tuple(encoded.values()))

    def put_row(self, table: str, values: dict[str, Any]) -> None:
        """A row of a table a test kind owns (schema.KIND_TABLES), replacing the one of the same key;
        committed now."""
        with self.transaction():
            self._insert(table, values, replace=True)

    def rows(self, table: str, order_by: str | None = None, **where: Any) -> list[dict[str, Any]]:
        """The rows of a kind's table matching `where` (column = value), decoded (_decoded)."""
        columns = _kind_columns(table)
        assert set(where) <= set(columns) and (order_by is None or order_by in columns)
        clause = " AND ".join(f"{name}=?" for name in where) or "1"
        order = f" ORDER BY {order_by}" if order_by else ""
        return [_decoded(columns, row) for row in self.conn.execute(
            f"SELECT * FROM {table} WHERE {clause}{order}", tuple(where.values()))]

    def search_trials(self, search_id: int) -> list[sqlite3.Row]:
        return list(self.conn.execute("SELECT * FROM search_trials WHERE search_id=? ORDER BY seq", (search_id,)))

    def search_trial_figures(self, search_id: int, table: str) -> dict[int, dict[str, Any]]:
        """seq -> the kind's figures of that trial (JSON columns decoded; a NULL column left out, so a
        figure the trial had none of reads as absent)."""
        columns = {k: v for k, v in _kind_columns(table).items() if k != "search_trial_id"}
        rows = self.conn.execute(f"SELECT t.seq, f.* FROM {table} f JOIN search_trials t ON t.id = f.search_trial_id "
                                 "WHERE t.search_id=? ORDER BY t.seq", (search_id,))
        return {row["seq"]: _decoded(columns, row) for row in rows}

    # --- calibration ---------------------------------------------------------------------------------

    def calibration(self, shape: str) -> float | None:
        row = self.conn.execute("SELECT throughput_bps FROM calibrations WHERE shape=?", (shape,)).fetchone()
        return None if row is None else float(row[0])

    def save_calibration(self, shape: str, throughput_bps: float, sender_cpu_pct: float | None) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO calibrations (shape, throughput_bps, sender_cpu_pct, "
                              "measured_at) VALUES (?, ?, ?, ?)", (shape, throughput_bps, sender_cpu_pct, time.time()))

    # --- DUT knob journal (testbed/journal.py) -----------------------------------------------------

    def journal_open(self, testbed: str) -> list[sqlite3.Row]:
        """Entries not restored yet, newest first (undo in reverse order of change)."""
        return list(self.conn.execute("SELECT * FROM dut_journal WHERE testbed=? AND restored_at IS NULL "
                                      "ORDER BY id DESC", (testbed,)))

    def journal_done(self, entry_id: int) -> None:
        with self.transaction():
            self.conn.execute("UPDATE dut_journal SET restored_at=? WHERE id=?", (time.time(), entry_id))


def _chunks(ids: Iterable[int], size: int = 500) -> Iterable[tuple[list[int], str]]:
    """The distinct ids in runs of `size` (under SQLite's bound-parameter limit), each with its "?, ?, ..." marks."""
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), size):
        chunk = wanted[start:start + size]
        yield chunk, ", ".join("?" * len(chunk))


__all__ = ["ExperimentRow", "Store", "cell_key", "default_db_path"]

