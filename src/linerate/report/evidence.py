"""The evidence behind a report's table, gathered for the HTML report: every trial in run order,
one trial's per-second throughput per cell, what differed between the columns, the hosts'
environment, and the failures. Pure functions of stored data, plus `gather` that reads the store.

Which trial's intervals a cell shows: the ok trial closest to the cell's median, so the picture
is a typical run, not the best or the worst one (those are visible as points in run order).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from linerate.errors import ParseError
from linerate.report.data import ROW_AXES, CellReport, Report, TrialPoint, grid, row_of
from linerate.store.db import Store
from linerate.traffic.iperf3 import Interval, intervals


@dataclass(frozen=True)
class RunPoint:
    position: int  # 1-based place of the attempt in the whole experiment's run order
    cell_id: int
    row: str
    column: str
    trial: TrialPoint
    deviation_pct: float | None  # ok trials: 100 * (value - cell mean) / cell mean


@dataclass
class CellEvidence:
    cell: CellReport
    row: str
    column: str
    points: list[RunPoint] = field(default_factory=list)
    chosen: TrialPoint | None = None
    intervals: list[Interval] = field(default_factory=list)
    intervals_note: str = ""  # why no intervals are shown
    pool_note: str = ""  # a generator pool's trial: whose intervals these are

    @property
    def attempt_values(self) -> list[float | None]:
        """Throughput of each attempt in run order; None for a failed one."""
        return [p.trial.throughput_bps if p.trial.status == "ok" else None for p in self.points]


@dataclass(frozen=True)
class KnobRow:
    name: str
    source: str  # "declared" (experiment file) | "read back" (from the hosts)
    values: dict[str, str]  # column -> value ("a | b" when the column's cells differed)


@dataclass
class Evidence:
    columns: list[str]
    rows: dict[str, dict[str, CellReport]]
    cells: list[CellEvidence]
    run_order: list[RunPoint]
    knobs_differ: list[KnobRow]
    knobs_same: list[KnobRow]
    environment: list[tuple[str, list[tuple[str, str]]]]
    failures: list[RunPoint]


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Nested read-back state -> {"offloads dut:lan0 tso": "on"}; lists stay compact JSON."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key in sorted(value):
            out.update(flatten(value[key], f"{prefix} {key}".strip()))
        return out
    if isinstance(value, (list, tuple, dict)):
        return {prefix: json.dumps(value, sort_keys=True, separators=(",", ":"))}
    return {prefix: "" if value is None else str(value)}


def run_order(cells: list[tuple[CellReport, str]]) -> list[RunPoint]:
    """Every attempt of the experiment in the order it ran (start time, then store id)."""
    entries = [(t, cell, row_of(cell), column) for cell, column in cells for t in cell.trials]
    entries.sort(key=lambda e: (e[0].started_at if e[0].started_at is not None else math.inf, e[0].trial_id))
    out = []
    for position, (trial, cell, row, column) in enumerate(entries, 1):
        mean = cell.summary.mean
        deviation = None
        if trial.status == "ok" and trial.throughput_bps is not None and mean:
            deviation = 100.0 * (trial.throughput_bps - mean) / mean
        out.append(RunPoint(position, cell.cell_id, row, column, trial, deviation))
    return out


def typical_trial(cell: CellReport) -> TrialPoint | None:
    ok = [t for t in cell.trials if t.status == "ok" and t.throughput_bps is not None]
    if not ok or cell.summary.median is None:
        return None
    return min(ok, key=lambda t: (abs(t.throughput_bps - cell.summary.median), t.trial_id))


def knob_rows(cells: list[tuple[CellReport, str]], columns: list[str], states: dict[int, dict],
              varying: list[str]) -> tuple[list[KnobRow], list[KnobRow]]:
    """What differed between the columns and what was the same: the declared parameters that are
    not traffic (firewall profile, offloads, sysctls ...) and every read-back knob of the trials."""
    seen: dict[tuple[str, str], dict[str, set[str]]] = {}
    for cell, column in cells:
        declared = {k: str(v) for k, v in cell.params.items() if k not in ROW_AXES}
        for name, value in declared.items():
            seen.setdefault((name, "declared"), {}).setdefault(column, set()).add(value)
        for state_id in {t.lab_state_id for t in cell.trials if t.lab_state_id is not None}:
            for name, value in flatten(states.get(state_id, {})).items():
                seen.setdefault((name, "read back"), {}).setdefault(column, set()).add(value)
    differ, same = [], []
    for (name, source), by_column in sorted(seen.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        values = {c: " | ".join(sorted(by_column[c])) if c in by_column else "–" for c in columns}
        row = KnobRow(name, source, values)
        distinct = set(values.values())
        if len(distinct) > 1 or (source == "declared" and name in varying):
            differ.append(row)
        else:
            same.append(row)
    return differ, same


def environment_sections(environment: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """The stored environment as (section, [(key, value)]): the run's own facts first, then one
    section per host (SSH testbeds) or per nested group (offloads of each interface)."""
    if not isinstance(environment, dict):
        return []
    general = [(k, str(v)) for k, v in sorted(environment.items()) if not isinstance(v, (dict, list))]
    sections = [("run", general)] if general else []
    hosts = environment.get("hosts")
    if isinstance(hosts, dict):
        for role in sorted(hosts):
            sections.append((f"host {role}", sorted(flatten(hosts[role]).items())))
    for key in sorted(environment):
        value = environment[key]
        if key != "hosts" and isinstance(value, (dict, list)):
            sections.append((key, sorted(flatten(value).items())))
    return sections


def gather(store: Store, report: Report) -> Evidence:
    """Needs a report built with detail=True. Reads the chosen trials' raw output and the lab states."""
    columns, rows = grid(report)
    placed = [(cells[column], column) for cells in rows.values() for column in columns if column in cells]
    order = run_order(placed)
    by_cell: dict[int, list[RunPoint]] = {}
    for point in order:
        by_cell.setdefault(point.cell_id, []).append(point)
    chosen = {cell.cell_id: typical_trial(cell) for cell, _ in placed}
    texts = store.trial_texts(t.trial_id for t in chosen.values() if t is not None)
    evidence_cells = []
    for row, cells in rows.items():
        for column in columns:
            cell = cells.get(column)
            if cell is None:
                continue
            item = CellEvidence(cell, row, column, by_cell.get(cell.cell_id, []), chosen[cell.cell_id])
            _attach_intervals(item, texts)
            evidence_cells.append(item)
    states = store.lab_states(t.lab_state_id for cell, _ in placed for t in cell.trials if t.lab_state_id)
    differ, same = knob_rows(placed, columns, states, report.varying())
    failures = [p for p in order if p.trial.status != "ok"]
    return Evidence(columns, rows, evidence_cells, order, differ, same,
                    environment_sections(report.experiment.environment), failures)


def _attach_intervals(item: CellEvidence, texts: dict[int, str]) -> None:
    if item.chosen is None:
        item.intervals_note = "no successful trial"
        return
    text = texts.get(item.chosen.trial_id, "")
    if not text.strip():
        item.intervals_note = "no iperf3 output stored for this trial (imported or summarised)"
        return
    pairs = item.cell.params.get("pairs", 1)
    if isinstance(pairs, int) and pairs > 1:
        item.pool_note = (f"These are pair 1's intervals (client to server) of {pairs}; the trial's figure is the "
                          f"{pairs} pairs' sum over the window in which all of them sent.")
    try:
        item.intervals = intervals(text, f"trial {item.chosen.trial_id}")
    except ParseError as exc:
        item.intervals_note = f"iperf3 output unreadable: {exc}"
        return
    if not item.intervals:
        item.intervals_note = "iperf3 output holds no intervals"
