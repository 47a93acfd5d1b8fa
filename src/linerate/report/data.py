"""Report data: stored trials grouped per cell and summarized. Pure function of store rows."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from linerate.stats import Summary, summarize
from linerate.store.db import ExperimentRow, Store

ROW_AXES = ("family", "streams", "direction", "protocol")


@dataclass(frozen=True)
class CellReport:
    cell_id: int
    params: dict[str, Any]
    summary: Summary
    flags: tuple[str, ...] = ()
    precision_reached: bool | None = None  # adaptive runs only: CI half-width <= precision x mean

    @property
    def few_trials(self) -> bool:
        """Fewer than 3 trials: the t interval is very wide (t = 12.7 for n = 2); reports mark it."""
        return 0 < self.summary.n < 3


@dataclass(frozen=True)
class Report:
    experiment: ExperimentRow
    cells: list[CellReport]

    def varying(self) -> list[str]:
        names = sorted({k for c in self.cells for k in c.params})
        return [n for n in names if len({json.dumps(c.params.get(n)) for c in self.cells}) > 1]


def build_report(store: Store, experiment_ref: str | int | None) -> Report:
    experiment = store.experiment(experiment_ref)
    values: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    failures: dict[int, int] = defaultdict(int)
    flags: dict[int, set[str]] = defaultdict(set)
    for row in store.trial_rows(experiment.id):
        cell = row["cell_id"]
        if row["status"] == "ok":
            bucket = values[cell]
            bucket["throughput"].append(row["throughput_bps"])
            bucket["retransmits"].append(row["retransmits"])
            bucket["cpu_local"].append(row["cpu_local_pct"])
            bucket["cpu_remote"].append(row["cpu_remote_pct"])
            bucket["lost_percent"].append(row["lost_percent"])
            bucket["jitter_ms"].append(row["jitter_ms"])
            flags[cell].update(json.loads(row["flags"]))
        elif row["final"]:
            failures[cell] += 1
    precision = experiment.config.get("precision") if isinstance(experiment.config, dict) else None
    cells = []
    for row in store.cell_rows(experiment.id):
        b = values.get(row["id"], {})
        summary = summarize(b.get("throughput", []), b.get("retransmits", []), b.get("cpu_local", []),
                            b.get("cpu_remote", []), failures=failures.get(row["id"], 0),
                            lost_percent=b.get("lost_percent", []), jitter_ms=b.get("jitter_ms", []))
        rel = summary.relative_half_width
        reached = None if not precision else (rel is not None and rel <= precision)
        cells.append(CellReport(row["id"], json.loads(row["params"]), summary, tuple(sorted(flags[row["id"]])),
                                reached))
    return Report(experiment, cells)
