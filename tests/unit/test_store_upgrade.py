"""A results database written by an older linerate is migrated when it is opened, and reports exactly
as it did before: the per-trial figures of cps and rfc9693 moved from their search's JSON to the
kinds' own tables (tests/data/store/README.md says how the database was made)."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from linerate.cli import main
from linerate.store.db import Store
from linerate.store.schema import MIGRATIONS

STORE = Path(__file__).resolve().parents[1] / "data" / "store"
REPORTS = sorted((STORE / "main-v8-reports").iterdir())


@pytest.fixture
def old_db(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(STORE / "main-v8.db", path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 8
    return path


def test_the_old_trial_figures_move_to_the_kinds_tables(old_db):
    with sqlite3.connect(old_db) as conn:
        before = {search_id: json.loads(results).get("trial_figures", {})
                  for search_id, results in conn.execute("SELECT id, results FROM searches")}
    store = Store(old_db)
    assert store.schema_version == len(MIGRATIONS)
    moved = 0
    for search_id, figures in before.items():
        for row in store.conn.execute("SELECT results FROM searches WHERE id=?", (search_id,)):
            assert "trial_figures" not in json.loads(row[0])
        for table in ("cps_trials", "rfc9693_trials"):
            now = store.search_trial_figures(search_id, table)
            for seq, values in now.items():  # every figure kept with its value (none of the old was null)
                old = figures[str(seq)]
                assert {k: v for k, v in old.items() if k != "purpose" and v is not None} == values
                moved += 1
    assert moved == sum(len(f) for f in before.values()) == 22


# axes added since these reports were written: a report lists them at their defaults (a tune's start
# cell names every lab axis), and nothing else may differ
AXES_SINCE_V8 = ("dut_ssh_key", "dut_host_keys", "dut_ssh_user", "dut_boot_timeout", "pairs", "pair_link_rate")


def without_new_axes(value):
    """The report with each axis added since v8 taken out where it shows at its default value."""
    from linerate.axes import AXES

    if isinstance(value, dict):
        return {k: without_new_axes(v) for k, v in value.items()
                if not (k in AXES_SINCE_V8 and v == AXES[k].default)}
    if isinstance(value, list):
        return [without_new_axes(v) for v in value]
    return value


@pytest.mark.parametrize("expected", REPORTS, ids=[p.name for p in REPORTS])
def test_an_old_database_reports_exactly_as_before(old_db, expected, capsys):
    experiment, fmt = expected.stem.split("-")[1], expected.suffix[1:]
    assert main(["report", experiment, "--db", str(old_db), "--format", fmt]) in (0, None)
    out = capsys.readouterr().out
    if fmt == "json" and out != expected.read_text():
        assert without_new_axes(json.loads(out)) == json.loads(expected.read_text())
    else:
        assert out == expected.read_text()


def test_each_kinds_trial_figures_are_exactly_its_tables_columns():
    from linerate.kinds.cps.trial import FIGURES, CpsTrial
    from linerate.kinds.rfc9693.run import FIGURES as STATE_FIGURES
    from linerate.search.state_path import StateTrial
    from linerate.store.integrity import reference

    cps = CpsTrial(rate=10.0, connections=10, duration_s=1.0, verdict="pass", succeeded=10, failed=0, client_failures=0)
    state = StateTrial(purpose="rate", connections=10, rate=10.0, sent=10, send_s=1.0, forwarded=10, validated=10,
                       reverse_sent=10, reverse_s=1.0, unsent=0)
    for table, figures in ((FIGURES, cps.figures()), (STATE_FIGURES, state.figures())):
        assert set(figures) == set(reference()[table]) - {"search_trial_id"}, table


def test_a_tunes_recorded_axes_move_from_its_environment_to_its_own_table(old_db):
    with sqlite3.connect(old_db) as conn:
        axes = json.loads(conn.execute("SELECT environment FROM experiments WHERE id=3").fetchone()[0])["tune_axes"]
    store = Store(old_db)
    from linerate.kinds.tune import storage
    assert storage.state(store, 3) == {"axes": axes}
    assert "tune_axes" not in store.experiment(3).environment
