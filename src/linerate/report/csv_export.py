"""CSV: one row per cell, parameters then statistics (bit/s)."""

from __future__ import annotations

import csv
import io

from linerate.report.data import Report

STAT_COLUMNS = ("n", "mean", "stdev", "ci_low", "ci_high", "ci_half_width", "median", "min", "max",
                "retransmits_mean", "cpu_local_mean", "cpu_remote_mean", "failures")


def serialize(report: Report) -> str:
    params = sorted({k for c in report.cells for k in c.params})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["experiment", "cell_id", *params, *[f"throughput_bps_{s}" if s not in
                    ("n", "failures", "retransmits_mean", "cpu_local_mean", "cpu_remote_mean") else s
                    for s in STAT_COLUMNS], "flags"])
    for cell in report.cells:
        stats = cell.summary.to_dict()
        writer.writerow([report.experiment.name, cell.cell_id, *[cell.params.get(p) for p in params],
                         *["" if stats[s] is None else stats[s] for s in STAT_COLUMNS], " ".join(cell.flags)])
    return out.getvalue()
