"""Schema migrations. MIGRATIONS[i] takes a database from user_version i to i+1; append, never edit
(version 1 and 2 are as they shipped, split into statements so that all pending migrations run in
one transaction: executescript() would commit between them).

A step is an SQL statement or a function of the connection (for changes SQL alone cannot express).
The trials table's measured columns come from the `measure` fields of model.Trial; a new field
needs a migration step `trial_columns({...})` naming it (a unit test holds the two together), so a
database at the current version has every column, and one that lacks one was damaged.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

APPLICATION_ID = 0x4C524154  # "LRAT": PRAGMA application_id of every linerate database (from v3)
KNOWN_TABLES = {"experiments", "cells", "trials", "lab_states", "calibrations", "run_locks", "dut_journal", "trial_raw",
                "searches", "search_trials", "cps_trials", "rfc9693_trials", "tune_state", "tune_decisions"}
# the tables test kinds own (Store.put_row / Store.rows): what is in them is the kind's to define
KIND_TABLES = {"cps_trials", "rfc9693_trials", "tune_state", "tune_decisions"}
# a kind's own figures of a search trial, one row per search_trials row (Store.add_search_trial): table -> the
# search test (params "test") whose trials it holds. Declared type JSON: a JSON document (Store decodes it).
FIGURE_TABLES = {"cps_trials": "cps", "rfc9693_trials": "rfc9693"}

Step = str | Callable[[sqlite3.Connection], None]


def cell_key(params: dict, declared: list[str] | None = None) -> str:
    """The identity of a cell: the values of the axes its experiment file declares (all of its
    parameters when nothing is declared, as for imports). A later linerate that registers a new
    axis therefore still finds the cells of an older, unfinished run."""
    chosen = params if declared is None else {name: params.get(name) for name in declared}
    return json.dumps(chosen, sort_keys=True, separators=(",", ":"))


def declared_names(config: dict) -> list[str] | None:
    """Axis names an experiment's stored config declares (axes and fixed values), or None."""
    if not isinstance(config, dict) or "axes" not in config:
        return None
    return sorted(set(config.get("axes") or {}) | set(config.get("fixed") or {}))


def _rekey_cells(conn: sqlite3.Connection) -> None:
    """v3: cells keyed by their declared axes only (was: every registered axis)."""
    for exp_id, config in conn.execute("SELECT id, config FROM experiments").fetchall():
        declared = declared_names(json.loads(config or "{}"))
        if declared is None:
            continue
        for cell_id, params in conn.execute("SELECT id, params FROM cells WHERE experiment_id=?",
                                            (exp_id,)).fetchall():
            conn.execute("UPDATE cells SET key=? WHERE id=?", (cell_key(json.loads(params), declared), cell_id))


def _figures_to_tables(conn: sqlite3.Connection) -> None:
    """v9: the per-trial figures cps and rfc9693 kept in their search's results JSON ("trial_figures", by
    seq) move to their own tables; the search's results keep only its summary. A figure of a name the
    table has no column for (none that linerate wrote) is dropped; a trial without figures (a run
    killed between the two writes of an older linerate) gets no row, as it had none."""
    for table, test in FIGURE_TABLES.items():
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")][1:]
        json_columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[2] == "JSON"}
        for search_id, params, results in conn.execute("SELECT id, params, results FROM searches").fetchall():
            try:
                params, results = json.loads(params or "{}"), json.loads(results or "{}")
            except ValueError:
                continue  # a damaged row: the integrity check names it, nothing is moved
            if not isinstance(params, dict) or params.get("test") != test or not isinstance(results, dict):
                continue
            figures = results.pop("trial_figures", None)
            if isinstance(figures, dict):
                for trial_id, seq in conn.execute("SELECT id, seq FROM search_trials WHERE search_id=?",
                                                  (search_id,)).fetchall():
                    figure = figures.get(str(seq))
                    if isinstance(figure, dict):
                        values = [json.dumps(figure.get(c)) if c in json_columns and figure.get(c) is not None
                                  else figure.get(c) for c in columns]
                        conn.execute(f"INSERT INTO {table} (search_trial_id, {', '.join(columns)}) VALUES "
                                     f"(?, {', '.join('?' * len(columns))})", (trial_id, *values))
            conn.execute("UPDATE searches SET results=? WHERE id=?", (json.dumps(results), search_id))


def _tune_state_to_table(conn: sqlite3.Connection) -> None:
    """v9: a tune's recorded axes and proposals move from its experiment's environment to tune_state."""
    for experiment_id, environment in conn.execute("SELECT id, environment FROM experiments").fetchall():
        try:
            environment = json.loads(environment or "{}")
        except ValueError:
            continue  # a damaged row: the integrity check names it
        if not isinstance(environment, dict) or not {"tune_axes", "tune_candidates"} & set(environment):
            continue
        axes, candidates = environment.pop("tune_axes", None), environment.pop("tune_candidates", None)
        conn.execute("INSERT INTO tune_state (experiment_id, axes, candidates) VALUES (?, ?, ?)",
                     (experiment_id, None if axes is None else json.dumps(axes),
                      None if candidates is None else json.dumps(candidates)))
        conn.execute("UPDATE experiments SET environment=? WHERE id=?", (json.dumps(environment), experiment_id))


def trial_columns(columns: dict[str, str]) -> Step:
    """A step adding these measured columns to trials where they are missing (databases before this
    step had them added as linerate learned the fields, so some have them already)."""
    def add(conn: sqlite3.Connection) -> None:
        present = {row[1] for row in conn.execute("PRAGMA table_info(trials)")}
        for name, sql_type in columns.items():
            if name not in present:
                conn.execute(f"ALTER TABLE trials ADD COLUMN {name} {sql_type}")
    return add


MIGRATIONS: list[list[Step]] = [
    [
        """CREATE TABLE experiments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'run',          -- run | import | demo
            file_text TEXT,
            config TEXT NOT NULL DEFAULT '{}',         -- validated experiment as JSON
            config_hash TEXT,
            seed INTEGER,
            environment TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'running',    -- running | done | interrupted
            started_at REAL NOT NULL,
            ended_at REAL
        )""",
        "CREATE INDEX experiments_name ON experiments(name)",
        """CREATE TABLE cells (
            id INTEGER PRIMARY KEY,
            experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
            key TEXT NOT NULL,                         -- canonical JSON of the parameters
            params TEXT NOT NULL,
            UNIQUE (experiment_id, key)
        )""",
        """CREATE TABLE trials (
            id INTEGER PRIMARY KEY,
            cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
            repetition INTEGER NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 1,
            status TEXT NOT NULL,                      -- ok | failed
            final INTEGER NOT NULL DEFAULT 1,          -- 0: a failed attempt that was retried
            error TEXT,
            throughput_bps REAL, sender_bps REAL, reverse_throughput_bps REAL,
            retransmits INTEGER, cpu_local_pct REAL, cpu_remote_pct REAL,
            lost_percent REAL, jitter_ms REAL, congestion TEXT, iperf3_version TEXT,
            flags TEXT NOT NULL DEFAULT '[]',          -- e.g. ["generator-bound"]
            argv TEXT NOT NULL DEFAULT '[]',
            dut_counters TEXT NOT NULL DEFAULT '{}',
            raw TEXT,
            started_at REAL, ended_at REAL,
            UNIQUE (cell_id, repetition, attempt)
        )""",
        "CREATE INDEX trials_cell ON trials(cell_id, status)",
    ],
    [
        """CREATE TABLE lab_states (                    -- read-back knob values, once per distinct lab
            id INTEGER PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            state TEXT NOT NULL
        )""",
        "ALTER TABLE trials ADD COLUMN lab_state_id INTEGER REFERENCES lab_states(id)",
        """CREATE TABLE calibrations (
            id INTEGER PRIMARY KEY,
            shape TEXT NOT NULL,                       -- lab shape + traffic case, canonical JSON
            throughput_bps REAL NOT NULL,
            sender_cpu_pct REAL,
            measured_at REAL NOT NULL,
            environment TEXT NOT NULL DEFAULT '{}',
            UNIQUE (shape)
        )""",
    ],
    [
        f"PRAGMA application_id = {APPLICATION_ID}",
        """CREATE TABLE run_locks (                     -- one live run per experiment name
            name TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            start_time INTEGER,
            host TEXT NOT NULL,
            acquired_at REAL NOT NULL
        )""",
        _rekey_cells,
    ],
    [
        # generator-neutral names (iperf3 is one Generator of several)
        "ALTER TABLE trials RENAME COLUMN iperf3_version TO generator_version",
        "ALTER TABLE trials ADD COLUMN telemetry TEXT NOT NULL DEFAULT '{}'",
        """CREATE TABLE dut_journal (                   -- every knob changed on a real host, before the change
            id INTEGER PRIMARY KEY,
            testbed TEXT NOT NULL,                     -- Inventory.identity_key()
            role TEXT NOT NULL,                        -- client | dut | server
            kind TEXT NOT NULL,                        -- sysctl | offload | process
            name TEXT NOT NULL,                        -- sysctl name, IF:feature, or a pid file
            original TEXT NOT NULL,                    -- value to put back (process: its pid)
            applied TEXT,
            created_at REAL NOT NULL,
            restored_at REAL
        )""",
        "CREATE INDEX dut_journal_open ON dut_journal(testbed, restored_at)",
    ],
    [
        """CREATE TABLE trial_raw (                     -- a trial's raw telemetry outputs, kept apart from
            trial_id INTEGER NOT NULL REFERENCES trials(id),  -- the rows reports scan
            host TEXT NOT NULL,                        -- dut | client | server
            phase TEXT NOT NULL,                       -- before | after (the measured window)
            text TEXT NOT NULL,                        -- snapshot text (dut/sections.py)
            PRIMARY KEY (trial_id, host, phase)
        )""",
    ],
    [
        """CREATE TABLE searches (                      -- one packet-rate search (RFC 2544 throughput)
            id INTEGER PRIMARY KEY,
            experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
            key TEXT NOT NULL,                         -- canonical JSON of params (frame size, family, lab)
            params TEXT NOT NULL,
            goals TEXT NOT NULL,                       -- the search goals as given to the library
            library TEXT NOT NULL,                     -- e.g. "MLRsearch 1.2.1"
            generator TEXT,                            -- e.g. "trafgen 0.6.8"
            theoretical_fps REAL,
            generator_max_fps REAL,
            results TEXT NOT NULL DEFAULT '{}',        -- goal name -> conditional throughput, bounds
            status TEXT NOT NULL DEFAULT 'running',    -- running | done | failed
            error TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            UNIQUE (experiment_id, key)
        )""",
        """CREATE TABLE search_trials (                 -- every trial a search measured, committed as it ends
            id INTEGER PRIMARY KEY,
            search_id INTEGER NOT NULL REFERENCES searches(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,                      -- order within the search (resume replays it)
            purpose TEXT NOT NULL,                     -- search | ceiling
            intended_duration_s REAL NOT NULL,
            intended_load_fps REAL,                    -- NULL: as fast as the generator can (ceiling)
            intended_count INTEGER NOT NULL,
            sent INTEGER NOT NULL,                     -- frames the generator emitted
            forwarded INTEGER NOT NULL,                -- frames counted at the server
            dut_loss INTEGER NOT NULL,                 -- sent - forwarded, never negative
            unsent INTEGER NOT NULL,                   -- frames not offered in time at the intended rate
            send_s REAL NOT NULL,                      -- the generator's sending time
            dut_counters TEXT NOT NULL DEFAULT '{}',
            started_at REAL, ended_at REAL,
            UNIQUE (search_id, seq)
        )""",
    ],
    [
        # the generator's command line of each search trial (trafgen or iperf3), as trials keep theirs
        "ALTER TABLE search_trials ADD COLUMN argv TEXT NOT NULL DEFAULT '[]'",
    ],
    [
        # the measured columns of model.Trial as of this version, until now added on open
        trial_columns({
            "throughput_bps": "REAL", "sender_bps": "REAL", "reverse_throughput_bps": "REAL", "retransmits": "INTEGER",
            "cpu_local_pct": "REAL", "cpu_remote_pct": "REAL", "packets_sent": "INTEGER", "packets_lost": "INTEGER",
            "lost_percent": "REAL", "jitter_ms": "REAL", "congestion": "TEXT", "generator": "TEXT",
            "generator_version": "TEXT", "rtt_idle_sent": "INTEGER", "rtt_idle_lost": "INTEGER",
            "rtt_idle_p50_ms": "REAL", "rtt_idle_p90_ms": "REAL", "rtt_idle_p99_ms": "REAL", "rtt_idle_max_ms": "REAL",
            "rtt_loaded_sent": "INTEGER", "rtt_loaded_lost": "INTEGER", "rtt_loaded_p50_ms": "REAL",
            "rtt_loaded_p90_ms": "REAL", "rtt_loaded_p99_ms": "REAL", "rtt_loaded_max_ms": "REAL"}),
    ],
    [
        """CREATE TABLE cps_trials (                    -- a cps trial's figures (kinds/cps/trial.py CpsTrial.figures)
            search_trial_id INTEGER PRIMARY KEY REFERENCES search_trials(id) ON DELETE CASCADE,
            verdict TEXT,                              -- pass | dut | client | server
            failed INTEGER, errored INTEGER, timeout INTEGER,
            timings JSON, request_percentiles JSON,    -- h2load's connect / first byte / request times
            capture JSON,                              -- the client's capture at the latency trial
            late TEXT, status JSON, limits JSON,       -- why a trial with completed connections failed; non-DUT limits
            client_before JSON, client_after JSON,     -- the client's port facts around the trial
            waited_s REAL, notes JSON,
            state_before JSON, state_after JSON, state_timeouts JSON  -- the DUT's state table around the trial
        )""",
        """CREATE TABLE rfc9693_trials (                -- an RFC 9693 trial's figures (search/state_path.py StateTrial)
            search_trial_id INTEGER PRIMARY KEY REFERENCES search_trials(id) ON DELETE CASCADE,
            forwarded INTEGER,                         -- phase 1 frames counted at the server
            validated INTEGER,                         -- phase 2 replies counted at the client
            reverse_sent INTEGER, reverse_s REAL,
            cleared INTEGER,                           -- states the DUT removed before the trial (NULL: it could not)
            state_before JSON, state_between JSON, state_after JSON,
            overshoot_s REAL                           -- the pacing correction the pcap was built with
        )""",
        _figures_to_tables,
        """CREATE TABLE tune_state (                    -- what a tune records once, so a resume and the report agree
            experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
            axes JSON,                                 -- the axes its cells are keyed by (every axis at its start)
            candidates JSON                            -- the proposals made for it (none: the file's [candidates])
        )""",
        _tune_state_to_table,
        """CREATE TABLE tune_decisions (                -- every decision of a tune as it was made (kinds/tune)
            experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,                      -- its order; the confirmation (knob "final") last
            knob TEXT NOT NULL, value JSON, proposed_by TEXT,
            decision TEXT NOT NULL,                    -- accepted | rejected | inconclusive
            why TEXT NOT NULL,
            pairs INTEGER NOT NULL, trials INTEGER NOT NULL,
            effect REAL, effect_low REAL, effect_high REAL,  -- candidate vs best, and its 95% interval
            p_better REAL, mean_best REAL, mean_candidate REAL,
            best JSON, cell JSON,                      -- the configurations compared
            decided_at REAL,
            PRIMARY KEY (experiment_id, seq)
        )""",
    ],
]
