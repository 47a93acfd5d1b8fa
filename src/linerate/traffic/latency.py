"""Latency under load: RTT probes with fping (Debian's `fping`), idle and while a trial's traffic
flows, summarised as median, p90, p99 and max.

Why fping: one ICMP echo every `interval_ms` to one address, no daemon on the far side (SSH testbeds'
servers need nothing new), both families from one binary, and `-C N -q` prints every probe's RTT
(or `-` for no reply within the timeout) on one stderr line. ICMP passes every linerate firewall
profile (topology/firewall.py). The probe is light: 100 echo requests/s of 84-byte IP packets
(122 bytes on the wire) is 98 kbit/s, 0.01% of a gigabit.

A probe without a reply is kept as lost, never dropped from the list: a queue that overflows shows
as losses, and leaving them out would make a bloated link look better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linerate.errors import ParseError

INTERVAL_MS = 10  # 100 Hz
TIMEOUT_MS = 1000  # longer than the emulated link's 200 ms queue; a later reply counts as lost
IDLE_PROBES = 100  # one second idle before the load starts
_LINE = re.compile(r"^(?P<address>\S+)\s+:\s+(?P<samples>(?:(?:-|\d+(?:\.\d+)?)\s*)+)$")


def fping_argv(address: str, family: int, count: int, interval_ms: int = INTERVAL_MS,
               timeout_ms: int = TIMEOUT_MS) -> list[str]:
    """`count` probes at `interval_ms`, quiet per-probe output, one summary line of RTTs."""
    return ["fping", f"-{family}", "-C", str(count), "-p", str(interval_ms), "-q", "-t", str(timeout_ms), address]


def probe_count(window_s: float, interval_ms: int = INTERVAL_MS) -> int:
    return max(1, int(window_s * 1000 / interval_ms))


def parse_fping(text: str, address: str, count: int | None = None) -> list[float | None]:
    """RTTs in ms for `address` from `fping -C count` stderr, None for a probe without a reply.
    fping 5.1 printed one value more than asked (a trailing 0.000) after replies came later than
    its -t (tests/data/fping/ipv4_loaded_some_late.txt); only the first `count` are probes."""
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match and match["address"] == address:
            samples = [None if token == "-" else float(token) for token in match["samples"].split()]
            return samples[:count] if count is not None else samples
    detail = text.strip().splitlines()[-1] if text.strip() else "no output"
    raise ParseError(f"fping printed no RTT line for {address}: {detail[:200]}")


@dataclass(frozen=True)
class RttSummary:
    sent: int
    lost: int
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None


def summarize(samples: list[float | None]) -> RttSummary:
    replies = [s for s in samples if s is not None]
    lost = len(samples) - len(replies)
    if not replies:
        return RttSummary(len(samples), lost, None, None, None, None)
    import numpy as np

    p50, p90, p99 = (float(v) for v in np.percentile(replies, [50, 90, 99]))
    return RttSummary(len(samples), lost, p50, p90, p99, max(replies))


def trial_fields(phases: dict[str, list[float | None]]) -> dict[str, float | int | None]:
    """The Trial's rtt_* columns from {"idle": samples, "loaded": samples}."""
    out: dict[str, float | int | None] = {}
    for phase, samples in phases.items():
        summary = summarize(samples)
        out.update({f"rtt_{phase}_sent": summary.sent, f"rtt_{phase}_lost": summary.lost,
                    f"rtt_{phase}_p50_ms": summary.p50_ms, f"rtt_{phase}_p90_ms": summary.p90_ms,
                    f"rtt_{phase}_p99_ms": summary.p99_ms, f"rtt_{phase}_max_ms": summary.max_ms})
    return out


def timeout_s(count: int, interval_ms: int = INTERVAL_MS) -> float:
    return count * interval_ms / 1000 + TIMEOUT_MS / 1000 + 10
