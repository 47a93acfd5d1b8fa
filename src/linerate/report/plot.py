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
    bars = ax.bar(range(len(cells)), means, yerr=[below, above], capsize=4, color=colors)
    labelled = False
    for index, (bar, cell) in enumerate(zip(bars, cells)):
        if cell.ceiling_bps:  # the cell's line-rate ceiling as a short line over its bar, % above it
            ceiling = cell.ceiling_bps / 1e6
            ax.hlines(ceiling, index - 0.45, index + 0.45, colors="#cc3311", linestyles="dashed",
                      label=None if labelled else "line-rate ceiling")
            labelled = True
            ax.annotate(f"{cell.line_rate_fraction * 100:.0f}%", (index, max(ceiling, bar.get_height())),
                        textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    if any(c.ceiling_bps for c in cells):
        ax.legend(loc="lower right", fontsize=7)
    ax.set_ylim(bottom=0)
    ax.set_xticks(range(len(cells)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("Mbit/s (mean ± 95% CI)")
    ax.set_title(f"{report.experiment.name}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
