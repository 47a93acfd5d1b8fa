"""One self-contained HTML file per report or comparison: Jinja2 templates (autoescaped: every
stored name, error and file is text, never markup) with the CSS and the charts inline, no script,
no font, no external reference — it opens from disk, offline, and prints.

Charts: the two experiment-wide ones are matplotlib figures as inline SVG (plot.py). The small
per-cell pictures (trials in run order, iperf3 intervals) are a few SVG shapes computed here
(`spark`): at 1,000 cells a matplotlib figure per cell would take a minute; these take
milliseconds, and every one sits beside a table holding the same numbers.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from linerate import __version__
from linerate.report.compare import MIN_PER_SIDE
from linerate.report.data import unique_verdicts
from linerate.report.evidence import gather
from linerate.report.layout import format_fps, format_mbps, format_ms, inert

SPARK_W, SPARK_H = 240.0, 48.0


@functools.lru_cache(maxsize=1)
def templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("linerate.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, finalize=inert)  # no raw terminal escape in the file either
    env.filters.update(mbps=format_mbps, ms=format_ms, pct=_pct, pvalue=_pvalue, signed_mbps=_signed_mbps,
                       when=_when, fps=format_fps)
    env.globals.update(spark=spark, attempt_rows=attempt_rows, version=__version__)
    return env


def _pct(fraction: float | None, digits: int = 1) -> str:
    return "–" if fraction is None else f"{fraction * 100:.{digits}f}%"


def _when(epoch: float | None) -> str:
    return "–" if epoch is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def _pvalue(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _signed_mbps(bps: float | None) -> str:
    if bps is None:
        return "–"
    return f"{bps / 1e6:+,.1f}" if abs(bps) >= 1e5 else f"{bps / 1e6:+,.3f}"


@dataclass(frozen=True)
class Spark:
    """A tiny inline chart: (x, y) per value in order, y None where the value is missing (a failed
    trial: drawn as a mark on the axis). y grows downwards; a flat series sits in the middle."""

    points: tuple[tuple[float, float | None], ...]

    @property
    def polyline(self) -> str:
        return " ".join(f"{x},{y}" for x, y in self.points if y is not None)

    def marks(self, radius: float = 2.6, hollow: Sequence[bool] = ()) -> Markup:
        """A dot per value (hollow where asked), a tick on the axis per missing value. Built here,
        not in a template loop: 100 trials x 1,000 cells is 100k shapes. Numbers only: nothing to escape."""
        parts = []
        for index, (x, y) in enumerate(self.points):
            if y is None:
                parts.append(f'<line class="failed" x1="{x}" y1="38" x2="{x}" y2="48"/>')
            else:
                kind = "omitted" if index < len(hollow) and hollow[index] else "dot"
                parts.append(f'<circle class="{kind}" cx="{x}" cy="{y}" r="{radius}"/>')
        return Markup("".join(parts))


def spark(values: Sequence[float | None], width: float = SPARK_W, height: float = SPARK_H) -> Spark:
    present = [v for v in values if v is not None and math.isfinite(v)]
    low, high = (min(present), max(present)) if present else (0.0, 0.0)
    span, pad = high - low, 4.0
    step = width / max(1, len(values) - 1)
    points = []
    for index, value in enumerate(values):
        x = round(index * step, 1) if len(values) > 1 else width / 2
        if value is None or not math.isfinite(value):
            points.append((x, None))
        else:
            share = 0.5 if span <= 0 else (value - low) / span
            points.append((x, round(pad + (1 - share) * (height - 2 * pad), 1)))
    return Spark(tuple(points))


def attempt_rows(points: Sequence[Any]) -> Markup:
    """<tr> per attempt (run #, repetition/attempt, Mbit/s, status): numbers and fixed words only."""
    rows = []
    for point in points:
        trial = point.trial
        repetition = f"{trial.repetition}/{trial.attempt}" if trial.attempt > 1 else str(trial.repetition)
        status = ("ok" if trial.status == "ok" else "failed") + ("" if trial.final else " (retried)")
        rows.append(f'<tr><td class="num">{point.position}</td><td class="num">{repetition}</td>'
                    f'<td class="num">{format_mbps(trial.throughput_bps)}</td><td>{status}</td></tr>')
    return Markup("\n".join(rows))


def render_report(store: Any, report: Any) -> str:
    """report: built with detail=True (data.build_report); the store gives the chosen trials' raw
    iperf3 output and the read-back knob states."""
    from linerate.report.plot import mean_ci_figure, run_order_figure, svg_text  # matplotlib: only for a page

    evidence = gather(store, report)
    exp = report.experiment
    charts: dict[str, Any] = {"mean_ci": None, "run_order": None}  # the template asks for both
    if any(c.summary.n for c in report.cells):
        charts["mean_ci"] = svg_text(mean_ci_figure(report), "Mean throughput per cell with 95% confidence "
                                     "interval, against each cell's line-rate ceiling")
    if evidence.run_order:
        charts["run_order"] = svg_text(run_order_figure(evidence.run_order, evidence.columns),
                                       "Each trial's deviation from its cell's mean, in run order")
    ceilings = sorted({c.line_rate_source for c in report.cells if c.line_rate_source})
    precision = exp.config.get("precision") if isinstance(exp.config, dict) else None
    return templates().get_template("report.html.j2").render(
        report=report, exp=exp, ev=evidence, charts=charts, verdicts=unique_verdicts(report),
        ceilings=ceilings, precision=precision,
        stored_version=(exp.environment or {}).get("linerate_version") if isinstance(exp.environment, dict) else None)


def render_compare(result: Any, store: Any) -> str:
    from linerate.report.plot import difference_figure, svg_text  # matplotlib: only for a page

    experiments = {side: store.experiment(selection.experiment_id) for side, selection in
                   (("A", result.a), ("B", result.b))}
    differences = []
    for pair in result.pairs:
        c = pair.comparison
        if c is not None and c.difference_ci is not None:
            differences.append((c.difference / 1e6, c.difference_ci[0] / 1e6, c.difference_ci[1] / 1e6))
        else:
            differences.append(None)
    chart = None
    if any(d is not None for d in differences):
        chart = svg_text(difference_figure([p.label for p in result.pairs], differences),
                         "Difference B minus A per cell with its 95% Welch confidence interval")
    return templates().get_template("compare.html.j2").render(
        result=result, experiments=experiments, chart=chart, min_per_side=MIN_PER_SIDE)
