"""The store as an adversary meets it: resume after a kill in a retry's backoff, a second run of
the same experiment, foreign/newer/special files, atomic migrations, an upgrade adding an axis."""

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from linerate import axes
from linerate.errors import ConfigError
from linerate.experiment.config import parse_experiment
from linerate.experiment.run import run_experiment
from linerate.testbed.fake import FakeTestbed, FakeTestbeds
from linerate.model import TRIAL_COLUMNS, Trial
from linerate.store import Store
from linerate.store import schema

EXP = """
name = "retry"
repetitions = 2
duration_s = 1
omit_s = 0
max_retries = 2
retry_backoff_s = 0.01
calibrate = false
[axes]
streams = [1, 4]
"""


class Lab(FakeTestbed):
    def __init__(self, script):
        super().__init__()
        self.script = script  # list of "ok" | "fail", consumed per trial

    def run_trial(self, params):
        outcome = self.script.pop(0) if self.script else "ok"
        if outcome == "fail":
            return Trial(status="failed", params=params, argv=("iperf3",), error="server busy")
        return Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=9e8, retransmits=0)


def factory(script):
    @contextlib.contextmanager
    def make(lab_params):
        yield Lab(script)
    return make


class Killed(BaseException):
    pass


def test_kill_during_retry_backoff_then_resume_completes(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.db")
    exp = parse_experiment(EXP)
    import linerate.kinds.throughput.scheduler as scheduler

    def killed_in_backoff(seconds):
        raise Killed()  # what SIGKILL during time.sleep looks like to the store: nothing more is written

    monkeypatch.setattr(scheduler.time, "sleep", killed_in_backoff)
    with pytest.raises(Killed):
        run_experiment(exp, store, FakeTestbeds(factory(["fail"]), {}), file_text=EXP, seed=1)
    assert store.conn.execute("SELECT COUNT(*) FROM trials WHERE final=0").fetchone()[0] == 1
    monkeypatch.undo()
    runs = [run_experiment(exp, Store(tmp_path / "s.db"), FakeTestbeds(factory([]), {}), file_text=EXP, resume=True)
            for _ in range(2)]  # the original bug crashed every later resume
    assert all(r.resumed for r in runs) and runs[0].trials_run == 4 and runs[1].trials_run == 0
    rows = store.conn.execute("SELECT cell_id, repetition, attempt, final, status FROM trials").fetchall()
    keys = [(c, r, a) for c, r, a, _, _ in rows]
    assert len(keys) == len(set(keys))
    finals = store.conn.execute("SELECT cell_id, COUNT(*) FROM trials WHERE final=1 GROUP BY cell_id").fetchall()
    assert sorted(n for _, n in finals) == [2, 2]
    # the retried repetition continued at attempt 2, after the stored attempt 1
    assert (1, 0, "failed") in [(a, f, s) for _, _, a, f, s in rows]
    assert any(a == 2 and f == 1 for _, _, a, f, _ in rows)


def test_second_run_of_the_same_experiment_is_refused_with_the_holders_pid(tmp_path):
    db = tmp_path / "s.db"
    Store(db).close()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from linerate.store import Store\n"
        f"s = Store({str(db)!r})\n"
        "with s.run_lock('retry'):\n"
        "    print('locked', flush=True); time.sleep(30)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError, match=f"being run by pid {holder.pid}"):
            run_experiment(parse_experiment(EXP), Store(db), FakeTestbeds(factory([]), {}), file_text=EXP)
    finally:
        holder.kill()
        holder.wait()
    # the holder died without releasing: its lock is taken over
    run_experiment(parse_experiment(EXP), Store(db), FakeTestbeds(factory([]), {}), file_text=EXP)


def snapshot(path: Path) -> dict:
    return {p.name: p.read_bytes() for p in path.parent.iterdir()}


def test_foreign_database_refused_before_anything_is_written(tmp_path):
    foreign = tmp_path / "other.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    before = snapshot(foreign)
    with pytest.raises(ConfigError, match="another program"):
        Store(foreign)
    assert snapshot(foreign) == before  # no WAL switch, no tables, no -wal/-shm files


def test_newer_schema_refused_unchanged(tmp_path):
    path = tmp_path / "new.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(schema.MIGRATIONS) + 5}")
    conn.commit()
    conn.close()
    before = snapshot(path)
    with pytest.raises(ConfigError, match="newer than this linerate"):
        Store(path)
    assert snapshot(path) == before


@pytest.mark.parametrize("make", ["memory", "fifo", "devzero", "uri", "dir"])
def test_special_paths_refused(tmp_path, make):
    target = {"memory": ":memory:", "devzero": "/dev/zero", "uri": f"file:{tmp_path}/x.db?mode=memory",
              "fifo": str(tmp_path / "fifo"), "dir": str(tmp_path)}[make]
    if make == "fifo":
        os.mkfifo(target)
    with pytest.raises(ConfigError, match="--db"):
        Store(target)


def test_readers_do_not_create_a_database(tmp_path):
    with pytest.raises(ConfigError, match="no database"):
        Store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_legacy_database_is_migrated_in_one_transaction(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for version in schema.MIGRATIONS[:2]:
        for step in version:
            conn.execute(step)
    conn.execute("PRAGMA user_version = 2")
    conn.execute("INSERT INTO experiments (name, config, started_at) VALUES ('x', "
                 "'{\"axes\": {\"streams\": [1]}, \"fixed\": {}}', 0)")
    conn.execute("INSERT INTO cells (experiment_id, key, params) VALUES (1, 'full', '{\"streams\": 1, \"mtu\": 1500}')")
    conn.commit()
    conn.close()

    def broken(conn):
        raise sqlite3.OperationalError("disk on fire")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, [broken]])
    with pytest.raises(sqlite3.OperationalError):
        Store(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2  # v3 rolled back with the failure
    assert conn.execute("SELECT key FROM cells").fetchone()[0] == "full"
    conn.close()
    monkeypatch.undo()
    store = Store(path)
    assert store.schema_version == len(schema.MIGRATIONS)
    assert store.conn.execute("SELECT key FROM cells").fetchone()[0] == '{"streams":1}'


def test_trial_columns_come_from_the_one_definition(tmp_path):
    store = Store(tmp_path / "s.db")
    columns = {row[1] for row in store.conn.execute("PRAGMA table_info(trials)")}
    assert set(TRIAL_COLUMNS) <= columns
    assert "packets_sent" in TRIAL_COLUMNS and "lost_percent" in TRIAL_COLUMNS


def test_no_sql_outside_the_store():
    src = Path(__file__).resolve().parents[2] / "src" / "linerate"
    offenders = [str(p.relative_to(src)) for p in src.rglob("*.py")
                 if "store" not in p.parts and re.search(r"\.execute(many|script)?\(", p.read_text())]
    assert offenders == []


def test_resume_survives_an_upgrade_that_registers_a_new_axis(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.db")
    exp = parse_experiment(EXP)

    class Stop(BaseException):
        pass

    calls = []

    @contextlib.contextmanager
    def stopping(lab_params):
        class L(FakeTestbed):
            def run_trial(self, params):
                if len(calls) == 2:
                    raise Stop()
                calls.append(params)
                return Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=9e8)
        yield L()

    with pytest.raises(Stop):
        run_experiment(exp, store, FakeTestbeds(stopping, {}), file_text=EXP, seed=3)
    monkeypatch.setitem(axes.AXES, "future_knob", axes.Axis("future_knob", "trial", "off", str, "on or off"))
    result = run_experiment(parse_experiment(EXP), store, FakeTestbeds(factory([]), {}), file_text=EXP, resume=True)
    assert result.resumed and result.trials_run == 2  # only the 2 missing, not all 4 again
    assert store.conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 2
