"""Charts with matplotlib (no display): the PNG of `report --plot`, and inline SVG for the HTML
report. SVG keeps text as text (svg.fonttype none: searchable, sharp when printed) and has no
external reference: the namespace declarations and the RDF metadata block matplotlib writes are
dropped, since inline SVG in HTML needs neither. Many points are rasterised into the SVG as an
embedded PNG (data: URI), so 100k trials do not become 100k SVG elements.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from linerate.report import output
from linerate.report.data import ROW_AXES, Report, column_of, row_of  # noqa: E402

# Paul Tol's colour-blind safe "bright" scheme; markers differ too, so print in grey still works.
COLORS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
CEILING_COLOR = "#cc3311"
LABELLED_CELLS = 60  # beyond this many cells, tick labels and % annotations would overlap
RASTER_POINTS = 2000

plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "linerate", "text.parse_math": False})


def mean_ci_figure(report: Report):
    """Mean per cell with its 95% CI, against each cell's line-rate ceiling (dashed)."""
    varying = report.varying()
    column_axes = [n for n in varying if n not in ROW_AXES]
    cells = [c for c in report.cells if c.summary.n]
    labelled = len(cells) <= LABELLED_CELLS
    labels = [f"{row_of(c)}\n{column_of(c, column_axes)}" + ("\n(n<3)" if c.few_trials else "") for c in cells]
    means = [c.summary.mean / 1e6 for c in cells]
    # Asymmetric bars: the lower end is the clipped ci_low (throughput is never negative).
    below = [(c.summary.mean - (c.summary.ci_low if c.summary.ci_low is not None else c.summary.mean)) / 1e6
             for c in cells]
    above = [(c.summary.half_width or 0) / 1e6 for c in cells]
    fig, ax = plt.subplots(figsize=(min(16, max(6, len(cells) * 0.9)), 4.5))
    colors = ["#bbbbbb" if c.few_trials else COLORS[0] for c in cells]
    if labelled:
        bars = ax.bar(range(len(cells)), means, yerr=[below, above], capsize=4, color=colors)
    else:  # hundreds of bars: a point with whiskers per cell draws as two collections, not N patches
        ax.errorbar(range(len(cells)), means, yerr=[below, above], fmt="o", markersize=2, color=COLORS[0],
                    elinewidth=0.6)
    ceilings = [(i, c.ceiling_bps / 1e6) for i, c in enumerate(cells) if c.ceiling_bps]
    if ceilings:  # each cell's line-rate ceiling as a short line over its bar
        ax.hlines([y for _, y in ceilings], [i - 0.45 for i, _ in ceilings], [i + 0.45 for i, _ in ceilings],
                  colors=CEILING_COLOR, linestyles="dashed", label="line-rate ceiling")
        ax.legend(loc="lower right", fontsize=7)
    if labelled:
        for index, (bar, cell) in enumerate(zip(bars, cells)):
            if cell.ceiling_bps:
                ax.annotate(f"{cell.line_rate_fraction * 100:.0f}%",
                            (index, max(cell.ceiling_bps / 1e6, bar.get_height())),
                            textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
        ax.set_xticks(range(len(cells)), labels, rotation=45, ha="right", fontsize=8)
    else:
        ax.set_xlabel(f"{len(cells)} cells in table order (labels omitted; see the table)")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("Mbit/s (mean ± 95% CI)")
    ax.set_title(f"{report.experiment.name}")
    fig.tight_layout()
    return fig


def png_bytes(fig) -> bytes:
    """A figure as PNG bytes (closed after): files are written by report/output.py alone."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=110)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def write_png(report: Report, path: str, option: str = "--plot") -> int:
    return output.write(path, png_bytes(mean_ci_figure(report)), option)


def run_order_figure(points: Sequence, columns: Sequence[str]):
    """Each trial's deviation from its cell's mean, in the order the trials ran: drift shows as a
    slope, outliers as lone points, failures as marks on the axis. One colour and marker per column."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ok = [p for p in points if p.deviation_pct is not None]
    raster = len(ok) > RASTER_POINTS
    by_column: dict[str, list] = {}
    for point in ok:
        by_column.setdefault(point.column, []).append(point)
    for index, column in enumerate(columns):
        mine = by_column.get(column)
        if mine:
            ax.scatter(np.fromiter((p.position for p in mine), float, len(mine)),
                       np.fromiter((p.deviation_pct for p in mine), float, len(mine)), s=14 if not raster else 3,
                       color=COLORS[index % len(COLORS)], marker=MARKERS[index % len(MARKERS)],
                       label=column if len(columns) <= 12 else None, rasterized=raster)
    failed = [p.position for p in points if p.trial.status != "ok"]
    if failed:
        ax.plot(failed, [0] * len(failed), linestyle="none", marker="|", markersize=14, color=CEILING_COLOR,
                label="failed attempt", transform=ax.get_xaxis_transform())
    ax.axhline(0, color="#777777", linewidth=0.8)
    ax.set_xlabel("run order (attempt number across the experiment)")
    ax.set_ylabel("% from its cell's mean")
    if len(columns) <= 12 or failed:
        ax.legend(loc="best", fontsize=7)
    fig.tight_layout()
    return fig


def difference_figure(labels: Sequence[str], differences: Sequence[tuple[float, float, float] | None]):
    """B - A per pair (Mbit/s) with its 95% Welch interval; pairs without a test are left blank."""
    fig, ax = plt.subplots(figsize=(8, max(2.2, 0.45 * len(labels) + 1)))
    for index, value in enumerate(differences):
        if value is not None:
            mid, low, high = value
            ax.errorbar([mid], [index], xerr=[[mid - low], [high - mid]], fmt="o", color=COLORS[0], capsize=4)
    ax.axvline(0, color="#777777", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("B − A, Mbit/s (95% CI)")
    fig.tight_layout()
    return fig


_OPEN_TAG = re.compile(r"<svg\b[^>]*>")


def svg_text(fig, title: str) -> str:
    """The figure as an inline <svg> element (closed after), with a title for screen readers."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    plt.close(fig)
    text = buffer.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text[text.index("<svg"):], flags=re.S)
    opening = _OPEN_TAG.search(text)
    view_box = re.search(r'viewBox="([^"]+)"', opening.group()).group(1)
    width = re.search(r'width="([0-9.]+)pt"', opening.group()).group(1)
    escaped = title.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    # never wider than drawn (fonts stay at their size), narrower on a small screen
    tag = f'<svg viewBox="{view_box}" style="max-width: {width}pt" role="img" aria-label="{escaped}" class="chart">'
    text = tag + f"<title>{escaped.replace('&quot;', chr(34))}</title>" + text[opening.end():]
    # xlink:href needs the xlink namespace outside HTML; inline in HTML, plain href does the same
    return text.replace("xlink:href", "href")
