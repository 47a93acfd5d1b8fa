"""Flag a trial that measured more than its emulated link can carry.

A result above the theoretical goodput of the link (calc/, for the cell's MTU, family and
protocol) is a measurement artefact, never a fact: iperf3 reads data that crossed before its
window, or the shaper's bucket released a burst. A trial is flagged "above-ceiling" when it exceeds
the ceiling by more than what the shaper's bucket can add in the trial (topology.link
burst_allowance_bps) plus ABOVE_TOLERANCE (iperf3's own window error: short trials read up to
+0.4% here, bench/link_accuracy.py). TCP ceilings assume timestamps (Linux's default); a UDP
ceiling assumes full-MTU datagrams, so both err towards not flagging.
"""

from __future__ import annotations

from typing import Any

from linerate.calc import LinkInput, goodput
from linerate.model import Trial
from linerate.topology.link import burst_allowance_bps, link_bps

ABOVE_CEILING = "above-ceiling"
ABOVE_TOLERANCE = 0.005


def ceiling_bps(cell: dict[str, Any], rate_bps: float | None = None) -> float | None:
    """Theoretical goodput of the cell's emulated link, or None when no link rate is set."""
    rate = rate_bps if rate_bps is not None else link_bps(cell)
    if rate is None:
        return None
    return goodput(LinkInput(rate, int(cell.get("mtu", 1500)), int(cell.get("family", 4)), True,
                             str(cell.get("protocol", "tcp")))).goodput_bps


def ceiling_flags(cell: dict[str, Any], trial: Trial) -> list[str]:
    rate = link_bps(cell)
    if not trial.ok or rate is None or trial.throughput_bps is None:
        return []
    allowance = burst_allowance_bps(rate, int(cell.get("mtu", 1500)), max(1, int(cell.get("duration_s", 1))))
    return [ABOVE_CEILING] if trial.throughput_bps > ceiling_bps(cell, rate) * (1 + ABOVE_TOLERANCE) + allowance else []
