"""Report data: stored trials grouped per cell and summarized. Pure function of store rows."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from linerate.diagnose.facts import cell_facts, mean_cpus
from linerate.diagnose.rules import diagnose
from linerate.dut.base import dut_os_family
from linerate.experiment.ceiling import ceiling_bps
from linerate.report.layout import row_label
from linerate.pool.window import pair_means
from linerate.stats import Summary, summarize
from linerate.stats.summary import RTT_FIGURES
from linerate.store.db import ExperimentRow, Store
from linerate.topology.link import link_description

ROW_AXES = ("family", "streams", "direction", "protocol")


@dataclass(frozen=True)
class TrialPoint:
    """One stored attempt, for the detailed (HTML) report: its place in the run and its outcome."""

    trial_id: int
    repetition: int
    attempt: int
    status: str
    final: bool
    throughput_bps: float | None
    started_at: float | None
    error: str | None
    lab_state_id: int | None


@dataclass(frozen=True)
class CellReport:
    cell_id: int
    params: dict[str, Any]
    summary: Summary
    flags: tuple[str, ...] = ()
    precision_reached: bool | None = None  # adaptive runs only: CI half-width <= precision x mean
    ceiling_bps: float | None = None  # theoretical goodput of the cell's link, MTU, family, protocol
    line_rate_source: str | None = None
    verdicts: tuple = ()  # diagnose.rules.Verdict, in rule order
    trials: tuple[TrialPoint, ...] = ()  # detail=True only: every attempt, in store order
    cpus: tuple[dict, ...] = ()  # detail=True only: DUT per-CPU split averaged by rank (facts.mean_cpus)
    cpus_shared: bool = False  # the CPUs are the whole machine's (namespace lab)
    pairs: tuple[dict, ...] = ()  # a generator pool's per-pair means (pool/window.pair_means)

    @property
    def line_rate_fraction(self) -> float | None:
        if not self.ceiling_bps or self.summary.mean is None:
            return None
        return self.summary.mean / self.ceiling_bps

    @property
    def verdict_codes(self) -> tuple[str, ...]:
        return tuple(v.code for v in self.verdicts)

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


def build_report(store: Store, experiment_ref: str | int | None, *, detail: bool = False) -> Report:
    """detail=True also keeps every attempt (TrialPoint) and the DUT's per-CPU split per cell."""
    experiment = store.experiment(experiment_ref)
    points: dict[int, list[TrialPoint]] = defaultdict(list)
    values: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    failures: dict[int, int] = defaultdict(int)
    flags: dict[int, set[str]] = defaultdict(set)
    telemetry: dict[int, list[dict]] = defaultdict(list)
    for row in store.trial_rows(experiment.id):
        cell = row["cell_id"]
        if detail:
            points[cell].append(TrialPoint(row["id"], row["repetition"], row["attempt"], row["status"],
                                           bool(row["final"]), row["throughput_bps"], row["started_at"],
                                           row["error"], row["lab_state_id"]))
        if row["status"] == "ok":
            bucket = values[cell]
            bucket["throughput"].append(row["throughput_bps"])
            bucket["retransmits"].append(row["retransmits"])
            bucket["cpu_local"].append(row["cpu_local_pct"])
            bucket["cpu_remote"].append(row["cpu_remote_pct"])
            bucket["lost_percent"].append(row["lost_percent"])
            bucket["jitter_ms"].append(row["jitter_ms"])
            for name in RTT_FIGURES:
                bucket[name].append(row[name])
            if row["flags"] != "[]":
                flags[cell].update(json.loads(row["flags"]))
            if row["telemetry"] != "{}" or row["dut_counters"] != "{}":
                telemetry[cell].append({"telemetry": json.loads(row["telemetry"]),
                                        "dut_counters": json.loads(row["dut_counters"])})
        elif row["final"]:
            failures[cell] += 1
    precision = experiment.config.get("precision") if isinstance(experiment.config, dict) else None
    dut_os = dut_os_family(experiment.environment)
    cells = []
    for row in store.cell_rows(experiment.id):
        b = values.get(row["id"], {})
        summary = summarize(b.get("throughput", []), b.get("retransmits", []), b.get("cpu_local", []),
                            b.get("cpu_remote", []), failures=failures.get(row["id"], 0),
                            lost_percent=b.get("lost_percent", []), jitter_ms=b.get("jitter_ms", []),
                            rtt={name: b.get(name, []) for name in RTT_FIGURES})
        rel = summary.relative_half_width
        reached = None if not precision else (rel is not None and rel <= precision)
        params = json.loads(row["params"])
        ceiling, source = line_rate(params, experiment.environment)
        cell_flags = tuple(sorted(flags[row["id"]]))
        verdicts = ()
        if summary.n:
            verdicts = tuple(diagnose(cell_facts(
                params, telemetry[row["id"]], mean_bps=summary.mean, retransmits=summary.retransmits_mean,
                ceiling_bps=ceiling, line_rate_source=source, flags=cell_flags, os_family=dut_os,
                rtt_idle_p50_ms=summary.rtt_idle_p50_ms_mean, rtt_loaded_p50_ms=summary.rtt_loaded_p50_ms_mean)))
        windows = [((t["telemetry"].get("dut") or {}).get("cpu") or []) for t in telemetry[row["id"]]] if detail else []
        shared = any((t["telemetry"].get("dut") or {}).get("shared_kernel") for t in telemetry[row["id"]])
        cells.append(CellReport(row["id"], params, summary, cell_flags, reached, ceiling, source, verdicts,
                                tuple(points.get(row["id"], ())), tuple(mean_cpus(windows)), shared,
                                tuple(pair_means([t["telemetry"] for t in telemetry[row["id"]]]))))
    return Report(experiment, cells)


def grid(report: Report) -> tuple[list[str], dict[str, dict[str, CellReport]]]:
    """The articles' layout: (columns, row label -> column -> cell). Rows are traffic cases
    ("IPv4 1 stream"), columns the configurations (the varying parameters that are not traffic)."""
    column_axes = [name for name in report.varying() if name not in ROW_AXES]
    rows: dict[str, dict[str, CellReport]] = {}
    columns: list[str] = []
    for cell in sorted(report.cells, key=lambda c: (c.params.get("streams", 1), c.params.get("family", 4),
                                                    str(c.params.get("direction")), str(c.params.get("protocol")))):
        column = column_of(cell, column_axes)
        if column not in columns:
            columns.append(column)
        rows.setdefault(row_of(cell), {})[column] = cell
    return columns, rows


def unique_verdicts(report: Report) -> dict[str, tuple[str, Any]]:
    """code -> (row label of the first cell that has it, its Verdict); "line rate unknown" is said
    elsewhere (the footer), not as a verdict."""
    seen: dict[str, tuple[str, Any]] = {}
    for cell in report.cells:
        for verdict in cell.verdicts:
            if verdict.code not in seen and verdict.code != "line-rate-unknown":
                seen[verdict.code] = (row_of(cell), verdict)
    return seen


def row_of(cell: CellReport) -> str:
    p = cell.params
    label = row_label(p.get("family", 4), p.get("streams", 1), p.get("direction", "forward"))
    return label + (" UDP" if p.get("protocol") == "udp" else "")


def column_of(cell: CellReport, column_axes: list[str]) -> str:
    if not column_axes:
        return "throughput"
    return ", ".join(f"{name} {cell.params.get(name) if cell.params.get(name) != '' else 'default'}"
                     for name in column_axes)


def line_rate(params: dict[str, Any], environment: Any) -> tuple[float | None, str | None]:
    """(goodput ceiling bit/s, where the link rate came from) for a cell: its emulated link in a
    namespace lab, else the testbed's line rate (inventory `link` or negotiated NIC speed)."""
    shape = f"MTU {params.get('mtu', 1500)}, IPv{params.get('family', 4)}, {params.get('protocol', 'tcp').upper()}"
    emulated = ceiling_bps(params)  # None without an emulated link
    if emulated:
        return emulated, f"{link_description(params)}, {shape}"
    testbed = (environment or {}).get("line_rate") if isinstance(environment, dict) else None
    if testbed and testbed.get("bps"):
        return ceiling_bps(params, float(testbed["bps"])), f"{testbed['source']}, {shape}"
    return None, None


def trial_diagnosis(trial: Any, cell: dict[str, Any], environment: Any,
                    flags: tuple[str, ...] | list[str]) -> tuple[float | None, str | None, list]:
    """One trial read as a cell of one (`linerate trial`): (goodput ceiling bit/s, where its link rate came
    from, every verdict diagnose gives on the trial's own figures and telemetry). No verdicts for a failed
    trial: it measured nothing to explain."""
    params = {**cell, **dataclasses.asdict(trial.params)}
    ceiling, source = line_rate(params, environment)
    if not trial.ok or trial.throughput_bps is None:
        return ceiling, source, []
    facts = cell_facts(params, [{"telemetry": trial.telemetry, "dut_counters": trial.dut_counters}],
                       mean_bps=trial.throughput_bps, retransmits=trial.retransmits, ceiling_bps=ceiling,
                       line_rate_source=source, flags=tuple(flags), os_family=dut_os_family(environment),
                       rtt_idle_p50_ms=trial.rtt_idle_p50_ms, rtt_loaded_p50_ms=trial.rtt_loaded_p50_ms)
    return ceiling, source, diagnose(facts)


def kind_searches(store: Any, experiment_id: int, test: str, *, figures: str | None = None) -> list[dict[str, Any]]:
    """The stored searches of one search kind (their params' "test"): params, status, error, generator
    and results; with `figures` (the kind's figure table), its trials' figures by seq as "trial_figures"."""
    out = []
    for row in store.searches(experiment_id):
        params = json.loads(row["params"])
        if params.get("test") != test:
            continue
        search = {"params": params, "status": row["status"], "error": row["error"],
                  "results": json.loads(row["results"] or "{}"), "generator": row["generator"]}
        if figures is not None:
            search["trial_figures"] = store.search_trial_figures(row["id"], figures)
        out.append(search)
    return out


def by_configuration(searches: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Searches grouped by their params without repetition and test (canonical JSON keys), in run order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for search in searches:
        key = json.dumps({k: v for k, v in search["params"].items() if k not in ("repetition", "test")}, sort_keys=True)
        out.setdefault(key, []).append(search)
    return out
