"""PNG bar chart: mean throughput per cell with 95% CI error bars (matplotlib, no display)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from linerate.report.data import ROW_AXES, Report  # noqa: E402
from linerate.report.markdown import column_of, row_of  # noqa: E402


def write_png(report: Report, path: str) -> None:
    varying = report.varying()
    column_axes = [n for n in varying if n not in ROW_AXES]
    cells = [c for c in report.cells if c.summary.n]
    labels = [f"{row_of(c)}\n{column_of(c, column_axes)}" + ("\n(n<3)" if c.few_trials else "") for c in cells]
    means = [c.summary.mean / 1e6 for c in cells]
    # Asymmetric bars: the lower end is the clipped ci_low (throughput is never negative).
    below = [(c.summary.mean - (c.summary.ci_low if c.summary.ci_low is not None else c.summary.mean)) / 1e6
             for c in cells]
    above = [(c.summary.half_width or 0) / 1e6 for c in cells]
    fig, ax = plt.subplots(figsize=(max(6, len(cells) * 0.9), 4.5))
    colors = ["#bbbbbb" if c.few_trials else "#4477aa" for c in cells]
    ax.bar(range(len(cells)), means, yerr=[below, above], capsize=4, color=colors)
    ax.set_ylim(bottom=0)
    ax.set_xticks(range(len(cells)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("Mbit/s (mean ± 95% CI)")
    ax.set_title(f"{report.experiment.name}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
