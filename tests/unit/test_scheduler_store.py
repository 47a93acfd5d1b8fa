import contextlib
import json
import random
import sqlite3

import pytest
from scipy import stats as sps
import numpy as np

from linerate.errors import ConfigError
from linerate.experiment.config import parse_experiment
from linerate.experiment.run import run_experiment
from linerate.testbed.fake import FakeTestbed, FakeTestbeds
from linerate.model import Trial
from linerate.report.data import build_report
from linerate.report.exporters import serializer
from linerate.store import Store
from linerate.store.schema import MIGRATIONS

CLASSIC = """
name = "classic"
repetitions = 3
duration_s = 1
omit_s = 0
retry_backoff_s = 0
calibrate = false
[axes]
family = [4, 6]
streams = [1, 4]
firewall = ["none", "stateful"]
"""


class FakeLab(FakeTestbed):
    """Synthetic trials: throughput depends on the cell, with seeded noise; can fail on demand."""

    def __init__(self, lab_params, rng, fail_every=0, noise=0.01, calls=None):
        super().__init__(lab_params)
        self.lab_params = lab_params
        self.rng = rng
        self.fail_every = fail_every
        self.noise = noise
        self.calls = calls if calls is not None else []

    def run_trial(self, params):
        self.calls.append((self.lab_params["firewall"], params))
        if self.fail_every and len(self.calls) % self.fail_every == 0:
            return Trial(status="failed", params=params, argv=("iperf3",), error="the server is busy")
        base = 940e6 * (1 if params.streams == 1 else 1.02) * (0.9 if self.lab_params["firewall"] != "none" else 1)
        value = base * (1 + self.rng.gauss(0, self.noise))
        return Trial(status="ok", params=params, argv=("iperf3",), throughput_bps=value, retransmits=3,
                     cpu_local_pct=40.0, cpu_remote_pct=20.0)


def factory(calls, fail_every=0, noise=0.01, entered=None):
    rng = random.Random(1)

    @contextlib.contextmanager
    def make(lab_params):
        if entered is not None:
            entered.append(lab_params)
        yield FakeLab(lab_params, rng, fail_every, noise, calls)
    return make


def run(store, text=CLASSIC, **kwargs):
    exp = parse_experiment(text)
    calls = kwargs.pop("calls", [])
    lab_factory = kwargs.pop("lab_factory", None) or factory(calls, kwargs.pop("fail_every", 0),
                                                            kwargs.pop("noise", 0.01))
    return run_experiment(exp, store, FakeTestbeds(lab_factory, {"test": True}), file_text=text, **kwargs)


def test_every_trial_stored_with_exact_repetitions(tmp_path):
    store = Store(tmp_path / "s.db")
    entered = []
    result = run(store, lab_factory=factory([], entered=entered), seed=5)
    assert result.trials_run == 24
    counts = store.conn.execute("SELECT cell_id, COUNT(*) FROM trials GROUP BY cell_id").fetchall()
    assert len(counts) == 8 and all(n == 3 for _, n in counts)
    assert len(entered) == 2  # one lab per firewall profile, kept for the whole run
    assert store.experiment("classic").status == "done" and store.experiment("classic").seed == 5


def test_a_restore_refused_after_the_last_trial_leaves_the_experiment_done_and_says_so(tmp_path):
    """Every trial stored, then the testbed says a change could not be put back when the run's reservation
    ends: the run fails (exit 1 for the user), the experiment is done, not "interrupted", and its
    environment says what was not restored."""
    from linerate.errors import RestoreFailed

    class Refusing(FakeTestbeds):
        @contextlib.contextmanager
        def reserve(self):
            yield
            raise RestoreFailed("testbed t: 1 change(s) could not be put back")

    store = Store(tmp_path / "r.db")
    text = CLASSIC
    with pytest.raises(RestoreFailed):
        run_experiment(parse_experiment(text), store, Refusing(factory([]), {"test": True}), file_text=text)
    row = store.experiment("classic")
    assert row.status == "done" and "could not be put back" in row.environment["restore_failed"]
    assert store.conn.execute("SELECT COUNT(*) FROM trials WHERE status = 'ok'").fetchone()[0] == 24


def test_seed_repeats_the_order(tmp_path):
    orders = []
    for i in range(2):
        calls = []
        run(Store(tmp_path / f"{i}.db"), calls=calls, seed=42)
        orders.append([(fw, p.family, p.streams) for fw, p in calls])
    assert orders[0] == orders[1]
    calls = []
    run(Store(tmp_path / "other.db"), calls=calls, seed=43)
    assert [(fw, p.family, p.streams) for fw, p in calls] != orders[0]


def test_resume_runs_only_what_is_missing(tmp_path):
    store = Store(tmp_path / "s.db")
    calls = []

    class Boom(Exception):
        pass

    @contextlib.contextmanager
    def dying(lab_params):
        lab = FakeLab(lab_params, random.Random(2), calls=calls)
        original = lab.run_trial

        def run_trial(params):
            if len(calls) == 10:
                raise Boom()
            return original(params)
        lab.run_trial = run_trial
        yield lab

    with pytest.raises(Boom):
        run(store, lab_factory=dying)
    assert store.experiment("classic").status == "interrupted"
    stored_before = store.conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    assert stored_before == 10
    result = run(store, resume=True)
    assert result.resumed and result.trials_run == 14
    rows = store.conn.execute(
        "SELECT cell_id, repetition, COUNT(*) FROM trials GROUP BY cell_id, repetition").fetchall()
    assert len(rows) == 24 and all(n == 1 for *_, n in rows)  # no duplicate repetitions
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(store.experiments()) == 1


def test_a_run_that_stops_before_its_first_trial_leaves_no_experiment_behind(tmp_path):
    """A lab that cannot be built (a knob the DUT refuses, a signal while it comes up): nothing was
    measured, so nothing is kept — no 'interrupted' row to resume or to list; a run that measured
    anything keeps its row (above)."""
    store = Store(tmp_path / "s.db")

    @contextlib.contextmanager
    def refused(lab_params):
        raise ConfigError("dut_sysctls", "refused by the DUT")
        yield

    with pytest.raises(ConfigError):
        run(store, lab_factory=refused)
    assert store.experiments() == []
    assert store.conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 0


def test_resume_refuses_a_changed_file(tmp_path):
    store = Store(tmp_path / "s.db")
    store.create_experiment("classic", "run", {}, config_hash="something-else", seed=1)
    with pytest.raises(ConfigError, match="different"):
        run(store, resume=True)


def test_failed_trials_are_retried_and_stored(tmp_path):
    store = Store(tmp_path / "s.db")
    run(store, fail_every=4)
    failed = store.conn.execute("SELECT final, error FROM trials WHERE status='failed'").fetchall()
    assert failed and all(error == "the server is busy" for _, error in failed)
    ok = store.conn.execute("SELECT COUNT(*) FROM trials WHERE status='ok'").fetchone()[0]
    assert ok == 24  # every repetition succeeded on a retry
    assert all(final == 0 for final, _ in failed)


def test_persistent_failure_is_final_and_reported(tmp_path):
    store = Store(tmp_path / "s.db")
    run(store, text=CLASSIC.replace("repetitions = 3", "repetitions = 1\nmax_retries = 1"), fail_every=1)
    rows = store.conn.execute("SELECT attempt, final FROM trials").fetchall()
    assert sorted({tuple(r) for r in rows}) == [(1, 0), (2, 1)]
    md = serializer("md")(build_report(store, "classic"))
    assert "failed (1)" in md


def test_adaptive_stops_quiet_cells_early(tmp_path):
    text = CLASSIC.replace("repetitions = 3", "precision = 0.01\nmin_repetitions = 3\nmax_repetitions = 12")
    quiet = Store(tmp_path / "q.db")
    run(quiet, text=text, noise=0.001)
    assert quiet.conn.execute("SELECT MAX(repetition) FROM trials").fetchone()[0] == 3
    noisy = Store(tmp_path / "n.db")
    run(noisy, text=text, noise=0.05)
    reps = [r[0] for r in noisy.conn.execute("SELECT MAX(repetition) FROM trials GROUP BY cell_id")]
    assert max(reps) > 3 and max(reps) <= 12


def test_report_ci_matches_independent_scipy_and_formats_agree(tmp_path):
    store = Store(tmp_path / "s.db")
    run(store, noise=0.02)
    report = build_report(store, "classic")
    doc = json.loads(serializer("json")(report))
    raw = sqlite3.connect(tmp_path / "s.db")
    for cell in doc["cells"]:
        values = [r[0] for r in raw.execute("SELECT throughput_bps FROM trials WHERE cell_id=? AND status='ok'",
                                            (cell["cell_id"],))]
        low, high = sps.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=sps.sem(values))
        assert cell["stats"]["n"] == 3
        assert cell["stats"]["ci_low"] == pytest.approx(low)
        assert cell["stats"]["ci_high"] == pytest.approx(high)
    md = serializer("md")(report)
    assert "| IPv4 1 stream |" in md and "firewall none" in md and "n=3" in md and " ± " in md
    csv_text = serializer("csv")(report)
    assert len(csv_text.strip().splitlines()) == 9


def test_every_measured_trial_field_has_its_column_from_a_migration():
    """A new measured field of model.Trial needs a migration step adding its column: a database at the
    current version then has every column, and one that lacks one is damaged (store/integrity.py)."""
    from linerate.model import TRIAL_COLUMN_TYPES
    from linerate.store.integrity import reference

    trials = reference()["trials"]
    assert {name: trials.get(name) for name in TRIAL_COLUMN_TYPES} == TRIAL_COLUMN_TYPES


def test_a_database_whose_measured_columns_were_added_on_open_migrates_to_the_same_columns(tmp_path):
    """Before the measured columns had a migration, linerate added them when it opened a file; such a
    file (all, some or none of them there) migrates to exactly the columns a new file has."""
    from linerate.store.integrity import reference

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    before = 7  # the version before the measured columns' own migration
    for steps in MIGRATIONS[:before]:
        for step in steps:
            conn.execute(step) if isinstance(step, str) else step(conn)
    conn.execute("ALTER TABLE trials ADD COLUMN rtt_idle_sent INTEGER")
    conn.execute(f"PRAGMA user_version = {before}")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.schema_version == len(MIGRATIONS)
    columns = {row[1]: row[2] for row in store.conn.execute("PRAGMA table_info(trials)")}
    assert columns == reference()["trials"]


def test_migrations_are_versioned_and_idempotent(tmp_path):
    path = tmp_path / "m.db"
    assert Store(path).schema_version == len(MIGRATIONS)
    assert Store(path).schema_version == len(MIGRATIONS)
    sqlite3.connect(path).execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    with pytest.raises(ConfigError, match="newer"):
        Store(path)


def test_not_a_database(tmp_path):
    bogus = tmp_path / "x.db"
    bogus.write_text("this is not sqlite" * 100)
    with pytest.raises(ConfigError, match="not an SQLite database"):
        Store(bogus)


def test_resume_with_no_earlier_run_says_it_starts_afresh(tmp_path):
    store = Store(tmp_path / "s.db")
    said = []
    result = run(store, resume=True, on_event=lambda event: said.append(event.message or ""))
    assert not result.resumed and result.trials_run == 24
    assert any("holds no earlier run of experiment 'classic' (run)" in text and "starts afresh" in text
               for text in said), said
