"""The RFC 2544 throughput table (RFC 2544 section 26.1 reporting format: one row per frame size,
frames/s and bit/s, with the theoretical maximum for the medium beside them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linerate.report.layout import format_fps, plain
from linerate.traffic import frames


def _mbps(fps: float | None, frame_bytes: float) -> str:
    return "–" if fps is None else f"{fps * frame_bytes * 8 / 1e6:,.1f}"


def _share(fps: float | None, theoretical: float | None) -> str:
    return "–" if fps is None or not theoretical else f"{fps / theoretical * 100:.1f}%"


def render_table(results: Sequence[Any], where: str, settings: Any, library: str, generator: str) -> str:
    """where: the path's description (Testbed.description)."""
    head = (f"RFC 2544 throughput, IPv{results[0].family if results else '?'}, {where}; {library}, {generator}, "
            f"{settings.trial_duration_s:g} s trials, NDR loss 0, PDR loss {settings.pdr_loss * 100:g}%, bounds within "
            f"{settings.relative_width * 100:g}%")
    columns = ["frame B", "theoretical fps", "NDR fps", "NDR Mbit/s", "NDR %", "PDR fps", "PDR Mbit/s", "PDR %",
               "generator max fps", "limit"]
    rows = []
    for r in results:
        limit = r.limit
        rows.append([frames.name(r.frame_bytes), format_fps(r.theoretical_fps), format_fps(r.ndr_fps),
                     _mbps(r.ndr_fps, r.mean_frame_bytes), _share(r.ndr_fps, r.theoretical_fps), format_fps(r.pdr_fps),
                     _mbps(r.pdr_fps, r.mean_frame_bytes),
                     _share(r.pdr_fps, r.theoretical_fps), format_fps(r.generator_max_fps), limit])
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(columns)]
    lines = [plain(head), "  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in rows]
    lines += [plain(frames.describe(r.frame_bytes, r.family)) + "; its frame rate and Mbit/s count the mean frame"
              for r in results if frames.is_mix(r.frame_bytes)]
    if any(r.limit == "generator" for r in results):
        lines.append("limit generator: above the NDR the sender fell behind (unsent frames, not DUT loss), or the "
                     "NDR is within 5% of the generator's own ceiling, so the DUT may forward more than this.")
    if any(r.limit == "sender CPU, shared with the DUT" for r in results):
        lines.append("limit sender CPU, shared with the DUT: in the namespace lab the DUT forwards on the sender's "
                     "CPUs, so a costlier DUT path (rules, conntrack) shows as a slower sender. A VM DUT (--dut vm: "
                     "its own vCPU threads) or an SSH testbed (--testbed) separates them.")
    return "\n".join(lines)
