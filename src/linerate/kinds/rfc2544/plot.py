"""Throughput vs frame size (`linerate report RFC2544-EXPERIMENT --plot FILE.png`): NDR per frame size,
mean with its 95% CI, one line per lab configuration, against the theoretical frame rate of the
link (the curve link / (8 x (frame + 20)), drawn for every size between the smallest and largest
measured) and the generator's own ceiling (hollow marks). Frames/s on a log axis: 64-byte and
1518-byte rates differ 18-fold on the same link. A mix (IMIX) is a star at its mean frame size."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linerate.calc.linerate import frame_rate
from linerate.report import output
from linerate.report.plot import CEILING_COLOR, COLORS, MARKERS, plt, png_bytes
from linerate.traffic.frames import is_mix, name


def frame_size_figure(experiment: Any, summaries: Sequence[Any]):
    from matplotlib.ticker import FuncFormatter, NullFormatter

    families = sorted({s.family for s in summaries}) or [4]
    fig, axes = plt.subplots(1, len(families), figsize=(6.4 * len(families), 4.4), squeeze=False)
    for ax, family in zip(axes[0], families):
        mine = [s for s in summaries if s.family == family]
        configurations = list(dict.fromkeys(s.configuration for s in mine))
        for index, configuration in enumerate(configurations):
            measured = [s for s in mine if s.configuration == configuration and s.ndr.n]
            if not measured:
                continue
            color, marker = COLORS[index % len(COLORS)], MARKERS[index % len(MARKERS)]
            points = sorted((s for s in measured if not is_mix(s.frame_bytes)), key=lambda s: s.frame_bytes)
            if points:
                ax.errorbar([s.frame_bytes for s in points], [s.ndr.mean for s in points], yerr=_ci(points),
                            color=color, marker=marker, capsize=3, label=f"NDR {configuration or experiment.name}")
            for mix in (s for s in measured if is_mix(s.frame_bytes)):  # at its mean frame, unjoined
                ax.errorbar([mix.mean_frame_bytes], [mix.ndr.mean], yerr=_ci([mix]), color=color, marker="*",
                            markersize=10, capsize=3, linestyle="none",
                            label=f"NDR {name(mix.frame_bytes)} {configuration or experiment.name}")
            ceilings = [(s.mean_frame_bytes, s.generator_max_fps) for s in measured if s.generator_max_fps]
            if ceilings:
                ax.plot(*zip(*ceilings), linestyle="none", marker=marker, markerfacecolor="none", color=color,
                        label=f"generator max {configuration}".strip())
        # the link's rate back from the stored theoretical frame rates (a lab's emulated link, a
        # testbed's inventory link or NIC speed alike)
        rates = {round(s.theoretical_fps * 8 * (s.mean_frame_bytes + 20), -3) for s in mine if s.theoretical_fps}
        sizes = sorted({round(s.mean_frame_bytes) for s in mine})
        for rate in sorted(rates):
            curve = list(range(sizes[0], sizes[-1] + 1, max(1, (sizes[-1] - sizes[0]) // 200)))
            ax.plot(curve, [frame_rate(rate, size).frames_per_s for size in curve], color=CEILING_COLOR,
                    linestyle="--", label=f"theoretical ({rate / 1e9:g} Gbit/s)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        fixed = sorted({s.frame_bytes for s in mine if not is_mix(s.frame_bytes)})
        ax.set_xticks(fixed, [str(size) for size in fixed])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))  # no math text
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("frame size (bytes, MAC header to FCS; a mix at its mean)")
        ax.set_ylabel("frames/s")
        ax.set_title(f"{experiment.name}: IPv{family} RFC 2544 throughput")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def _ci(points: Sequence[Any]) -> list[list[float]]:
    low = [s.ndr.mean - (s.ndr.ci_low if s.ndr.ci_low is not None else s.ndr.mean) for s in points]
    high = [(s.ndr.ci_high if s.ndr.ci_high is not None else s.ndr.mean) - s.ndr.mean for s in points]
    return [low, high]


def write_frame_size_png(experiment: Any, summaries: Sequence[Any], path: str, option: str = "--plot") -> int:
    return output.write(path, png_bytes(frame_size_figure(experiment, summaries)), option)
