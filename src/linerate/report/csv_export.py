"""CSV: one row per cell, parameters then statistics (bit/s)."""

from __future__ import annotations

import csv
import io

from linerate.report.data import Report
from linerate.stats.summary import RTT_FIGURES

RTT_MEANS = tuple(f"{name}_mean" for name in RTT_FIGURES)
STAT_COLUMNS = ("n", "mean", "stdev", "ci_low", "ci_high", "ci_half_width", "median", "min", "max",
                "retransmits_mean", "cpu_local_mean", "cpu_remote_mean", "failures", "lost_percent_mean",
                "jitter_ms_mean", *RTT_MEANS)
PLAIN_STATS = ("n", "failures", "retransmits_mean", "cpu_local_mean", "cpu_remote_mean", "lost_percent_mean",
               "jitter_ms_mean", *RTT_MEANS)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe(value: object) -> object:
    """Text a spreadsheet could run as a formula (OWASP CSV injection) gets a leading quote;
    numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def serialize(report: Report) -> str:
    env = report.experiment.environment if isinstance(report.experiment.environment, dict) else {}
    not_applied = set(env.get("axes_not_applied") or ())  # a real testbed's hosts decide these, not the file
    params = sorted({k for c in report.cells for k in c.params} - not_applied)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([safe(h) for h in ["experiment", "cell_id", *params,
                     *[s if s in PLAIN_STATS else f"throughput_bps_{s}" for s in STAT_COLUMNS],
                     "precision_reached", "flags", "ceiling_bps", "line_rate_fraction", "line_rate_source",
                     "verdicts"]])
    for cell in report.cells:
        stats = cell.summary.to_dict()
        reached = "" if cell.precision_reached is None else str(cell.precision_reached).lower()
        writer.writerow([safe(v) for v in [report.experiment.name, cell.cell_id, *[cell.params.get(p) for p in params],
                         *["" if stats[s] is None else stats[s] for s in STAT_COLUMNS], reached,
                         " ".join(cell.flags), "" if cell.ceiling_bps is None else cell.ceiling_bps,
                         "" if cell.line_rate_fraction is None else round(cell.line_rate_fraction, 5),
                         cell.line_rate_source or "line rate unknown", " ".join(cell.verdict_codes)]])
    return out.getvalue()
