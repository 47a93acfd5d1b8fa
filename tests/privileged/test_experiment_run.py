import json
import sqlite3
import subprocess
import time

from tests.privileged.conftest import LINERATE, linerate, netns_names

SMALL = """
name = "small"
repetitions = 2
duration_s = 1
omit_s = 0
[axes]
family = [4, 6]
firewall = ["none", "stateful"]
"""


def test_sigkill_mid_run_then_resume(tmp_path):
    exp = tmp_path / "small.toml"
    exp.write_text(SMALL)
    db = tmp_path / "r.db"
    before = netns_names()
    run = subprocess.Popen([*LINERATE, "run", str(exp), "--db", str(db)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240  # a guard only: 3 trials come after the calibration's (~20 s here idle)
    stored = 0
    while time.monotonic() < deadline and stored < 3 and run.poll() is None:
        time.sleep(0.3)
        if db.exists():
            try:
                stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM trials").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0
    run.kill()
    run.wait()
    assert 3 <= stored < 8
    linerate("lab", "clean")
    assert netns_names() == before
    out = linerate("run", str(exp), "--db", str(db), "--resume").stdout
    assert "(resumed)" in out
    conn = sqlite3.connect(db)
    per_cell = conn.execute("SELECT cell_id, COUNT(*), COUNT(DISTINCT repetition) FROM trials "
                            "WHERE status='ok' GROUP BY cell_id").fetchall()
    assert len(per_cell) == 4 and all(n == 2 and distinct == 2 for _, n, distinct in per_cell)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT COUNT(*) FROM experiments").fetchone()[0] == 1
    assert netns_names() == before

    md = linerate("report", "small", "--db", str(db)).stdout
    doc = json.loads(linerate("report", "small", "--db", str(db), "--format", "json").stdout)
    assert "| IPv4 1 stream |" in md and "n=2" in md
    for cell in doc["cells"]:
        assert cell["stats"]["n"] == 2 and cell["stats"]["mean"] > 1e8
        assert cell["stats"]["ci_low"] <= cell["stats"]["mean"] <= cell["stats"]["ci_high"]
    env = conn.execute("SELECT environment FROM experiments").fetchone()[0]
    assert "iperf3_version" in json.loads(env) and "offloads" in json.loads(env)

    cmp = linerate("compare", "small:firewall=none", "small:firewall=stateful", "--db", str(db)).stdout
    assert "Welch" in cmp and "IPv4 1 stream" in cmp and "p=" in cmp
