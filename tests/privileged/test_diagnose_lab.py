"""Diagnosis on the real namespace lab: an emulated 1 Gbit/s link reads ~100% of line rate with the
verdict at-line-rate in every report format; the unshaped lab says generator-bound, line rate
unknown, and makes no DUT-CPU claim (the DUT is the generator's own kernel there)."""

import csv
import io
import json
import sqlite3

from linerate.store import Store
from tests.privileged.conftest import linerate

EXPERIMENT = """
name = "diag"
repetitions = 2
duration_s = 2
omit_s = 1
[axes]
streams = [1]
link_rate = ["1g", "none"]
"""


def test_line_rate_and_verdicts_in_every_format(tmp_path):
    exp = tmp_path / "diag.toml"
    exp.write_text(EXPERIMENT)
    db = str(tmp_path / "d.db")
    linerate("run", str(exp), "--db", db)
    doc = json.loads(linerate("report", "diag", "--db", db, "--format", "json").stdout)
    cells = {c["params"]["link_rate"]: c for c in doc["cells"]}
    shaped, unshaped = cells["1g"], cells["none"]
    assert 0.97 <= shaped["line_rate_fraction"] <= 1.005
    assert abs(shaped["ceiling_bps"] - 941.48e6) < 0.1e6
    codes = [v["code"] for v in shaped["verdicts"]]
    assert codes[0] == "at-line-rate" and "shared-kernel" in codes
    assert unshaped["line_rate_fraction"] is None and unshaped["line_rate_source"] == "line rate unknown"
    codes = [v["code"] for v in unshaped["verdicts"]]
    assert "generator-bound" in codes and "shared-kernel" in codes
    assert not {"cpu-bound", "single-core-bound"} & set(codes)

    md = linerate("report", "diag", "--db", db).stdout
    assert "% of line rate" in md and "[at-line-rate]" in md and "(line rate unknown)" in md
    rows = list(csv.DictReader(io.StringIO(linerate("report", "diag", "--db", db, "--format", "csv").stdout)))
    by_link = {r["link_rate"]: r for r in rows}
    assert float(by_link["1g"]["line_rate_fraction"]) >= 0.97 and "at-line-rate" in by_link["1g"]["verdicts"]
    assert by_link["none"]["line_rate_fraction"] == "" and "generator-bound" in by_link["none"]["verdicts"]
    png = tmp_path / "r.png"
    linerate("report", "diag", "--db", db, "--plot", str(png))
    assert png.stat().st_size > 1000

    text = linerate("diagnose", "diag", "--db", db).stdout
    assert "[at-line-rate]" in text and "[generator-bound]" in text

    # telemetry: read inside the measured window, raw outputs kept apart from the trial rows
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT id, telemetry FROM trials").fetchall()
    assert rows and all(0.8 < json.loads(t)["dut"]["window_s"] < 2.0 for _, t in rows)
    store = Store(db, create=False)
    raw = store.trial_raw(rows[0][0])["dut"]
    assert raw["before"] != raw["after"] and "### linerate: cat /proc/stat" in raw["after"]
    # per trial: the full reads before and after the run, and the two window reads inside it
    assert conn.execute("SELECT COUNT(*) FROM trial_raw").fetchone()[0] == 4 * len(rows)
    assert "### linerate: ip -j -s link show" not in store.trial_raw(rows[0][0])["dut_window"]["after"]
