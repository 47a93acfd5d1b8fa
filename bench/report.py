"""Report time on a store of 100k synthetic trials / 1,000 cells, measured here: md and json
(goal <= 2 s) and the one-file HTML report (goal <= 5 s), each from a fresh Store as the CLI does.
Every 100th trial carries a real iperf3 -J output, so the HTML's per-cell intervals are parsed.
Run: .venv/bin/python bench/report.py [TRIALS]"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from linerate.axes import AXES
from linerate.report.data import build_report
from linerate.report.exporters import serializer
from linerate.store import Store
from linerate.store.db import cell_key


def build_store(path: Path, trials: int, cells: int = 1000) -> None:
    store = Store(path)
    exp = store.create_experiment("synthetic", "run", {}, seed=1)
    base = {name: axis.default for name, axis in AXES.items()}
    params = [{**base, "streams": 1 + i % 64, "mtu": 1280 + i // 64, "duration_s": 5, "omit_s": 1}
              for i in range(cells)]
    ids = store.ensure_cells(exp, params)
    cell_ids = [ids[cell_key(p)] for p in params]
    rng = random.Random(1)
    raw = (Path(__file__).parent.parent / "tests/data/iperf3/tcp_forward_p1.json").read_text()
    rows = [(cell_ids[i % cells], i // cells + 1, 1, "ok", 1, 940e6 * (1 + rng.gauss(0, 0.01)), 10, 40.0, 20.0,
             float(i), raw if i % 100 == 0 else None)
            for i in range(trials)]
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO trials (cell_id, repetition, attempt, status, final, throughput_bps, retransmits, "
            "cpu_local_pct, cpu_remote_pct, started_at, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    store.close()


def main(trials: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        build_store(path, trials)
        for fmt, goal in (("md", 2.0), ("json", 2.0), ("html", 5.0)):
            start = time.perf_counter()
            if fmt == "html":
                from linerate.report.html import render_report

                store = Store(path)
                text = render_report(store, build_report(store, "synthetic", detail=True))
            else:
                text = serializer(fmt)(build_report(Store(path), "synthetic"))
            elapsed = time.perf_counter() - start
            if fmt == "json":
                assert len(json.loads(text)["cells"]) == 1000
            if fmt == "html":
                assert text.count("data-cell-id=") == 1000 and "http://" not in text and "https://" not in text
            print(f"report --format {fmt} on {trials:,} trials / 1,000 cells: {elapsed:.2f} s, "
                  f"{len(text.encode()) / 1e6:.1f} MB (goal <= {goal:g} s: {'met' if elapsed <= goal else 'NOT met'}; "
                  f"ratio to goal {elapsed / goal:.2f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
