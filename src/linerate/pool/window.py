"""A pooled trial's figures: N pairs sent at once, and the aggregate counts only the time in which
every pair was sending.

Each pair's receiver reports its bytes per interval (iperf3 -J, every POOL_INTERVAL_S); a pair's
clock starts at its first full measured interval (`measured`). The pairs were launched together,
and each launch instant is measured: pair i's interval [s, e] sits at [offset_i + s, offset_i + e]
on a common clock, offset_i being how long after the first pair it was launched. The common window runs
from the latest pair's first measured instant to the earliest pair's last; a pair's figure is its
bytes over the seconds of the intervals inside that window (an interval may stick out by
EDGE_TOLERANCE of its length: the launch skew here is milliseconds), and the aggregate is the sum
of the pairs' figures. Why not each pair's whole-run figure: a pair that started late or ran on
after the others would be counted while it had the DUT to itself.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Any

from linerate.errors import LinerateError
from linerate.model import Trial, TrialParams
from linerate.traffic.iperf3 import Interval, receiver_intervals

EDGE_TOLERANCE = 0.02  # of an interval's length
MIN_WINDOW_SHARE = 0.5  # of the measured duration: less common time than this fails the trial
SLOW_SHARE = 0.8  # a pair below this share of the other pairs' median is named
START_TOLERANCE_S = 0.1  # a pair's set-up may differ from the others' by this much (the launch skew here: ms)
# over SSH each pair's launch and end are seen through its own SSH channel, whose start and close add ~0.02-0.15 s
# that differ between sessions (0.10-0.14 s between two pairs seen here); well below a retransmitted SYN's 1 s
REMOTE_START_TOLERANCE_S = 0.3


@dataclass(frozen=True)
class Member:
    """One pair's run in a pooled trial."""

    client: str  # role names: client2 ...
    server: str
    address: str  # the server address it sent to
    launched: float  # monotonic instant its process was started
    trial: Trial  # its own parse: receiver-side summary of its whole run
    ended: float | None = None  # monotonic instant its process had ended

    @property
    def name(self) -> str:
        return f"{self.client} -> {self.server}"


def measured(intervals: list[Interval]) -> list[Interval]:
    """A pair's intervals on its own clock from 0: without the slivers iperf3 prints where its omitted seconds
    end (seen from a 3.9 server: start 1.0, end 1.0, 'seconds' 2.0) and after its last full interval (a 0.04 s
    tail), which are shorter than half the usual interval; where the clock starts differs between versions
    (restarted at 0 after the omitted seconds, or not)."""
    lengths = sorted(i.end_s - i.start_s for i in intervals)
    if not lengths:
        return []
    usual = lengths[len(lengths) // 2]
    kept = [i for i in intervals if i.end_s - i.start_s >= usual / 2]
    if not kept:
        return []
    zero = kept[0].start_s
    return [dataclasses.replace(i, start_s=i.start_s - zero, end_s=i.end_s - zero) for i in kept]


def counted(intervals: list[Interval], offset: float, start: float, end: float) -> list[Interval]:
    """The intervals of a pair launched `offset` s after the first one that lie within [start, end]."""
    out = []
    for interval in intervals:
        slack = EDGE_TOLERANCE * (interval.end_s - interval.start_s)
        if offset + interval.start_s >= start - slack and offset + interval.end_s <= end + slack:
            out.append(interval)
    return out


def rate_bps(intervals: list[Interval]) -> float:
    seconds = sum(i.end_s - i.start_s for i in intervals)
    return sum(i.bits_per_second * (i.end_s - i.start_s) for i in intervals) / seconds if seconds > 0 else 0.0


def pool_trial(members: list[Member], params: TrialParams, start_tolerance_s: float = START_TOLERANCE_S) -> Trial:
    """The pooled trial: failed (naming the pair) when any pair failed or the pairs did not send together
    for long enough; else the aggregate over the common window, each pair's figure in telemetry["pairs"].
    start_tolerance_s: how far the pairs' set-ups may differ (late_starter)."""
    first = members[0].trial
    argv = tuple(arg for member in members for arg in (*member.trial.argv, ";"))[:-1]
    common = dict(params=params, argv=argv, generator=first.generator, generator_version=first.generator_version,
                  timestamp=first.timestamp, raw=first.raw,
                  telemetry_raw={f"pair{index + 1}": {"iperf3": m.trial.raw} for index, m in enumerate(members)})
    failed = [(index, m) for index, m in enumerate(members) if not m.trial.ok]
    if failed:
        index, member = failed[0]
        return Trial(status="failed", error=f"pair {index + 1} of {len(members)} ({member.name}): {member.trial.error}",
                     telemetry={"pairs": _pairs(members, {})}, **common)
    base = min(m.launched for m in members)
    reports = []
    for index, member in enumerate(members):
        try:
            intervals = measured(receiver_intervals(member.trial.raw, params.direction, f"pair {index + 1} output"))
        except LinerateError as exc:
            intervals, why = [], str(exc)
        else:
            why = "its iperf3 output holds no receiver intervals (an iperf3 server without --json?)"
        if not intervals:
            return Trial(status="failed", error=f"pair {index + 1} ({member.name}): {why}",
                         telemetry={"pairs": _pairs(members, {})}, **common)
        reports.append((member.launched - base, intervals))
    late = late_starter(members, start_tolerance_s)
    if late is not None:
        return Trial(status="failed", telemetry={"pairs": _pairs(members, {})}, error=late, **common)
    start = max(offset + intervals[0].start_s for offset, intervals in reports)
    end = min(offset + intervals[-1].end_s for offset, intervals in reports)
    skew_ms = round(max(offset for offset, _ in reports) * 1000, 1)
    window = {"pairs": len(members), "window_s": round(max(0.0, end - start), 3), "start_skew_ms": skew_ms,
              "measured_s": params.duration_s, "setup_spread_s": setup_spread(members)}
    if end - start < MIN_WINDOW_SHARE * params.duration_s:
        return Trial(status="failed", telemetry={"pool": window, "pairs": _pairs(members, {})},
                     error=f"the {len(members)} pairs sent together for {max(0.0, end - start):.2f} s of "
                     f"{params.duration_s} s (their starts {skew_ms:g} ms apart): too little to sum; "
                     "use a longer duration", **common)
    figures = {}
    for index, (offset, intervals) in enumerate(reports):
        inside = counted(intervals, offset, start, end)
        figures[index] = (rate_bps(inside), round(sum(i.end_s - i.start_s for i in inside), 3))
    window["slow"] = slow_pairs(members, figures)
    trials = [m.trial for m in members]
    return Trial(status="ok", throughput_bps=sum(rate for rate, _ in figures.values()),
                 sender_bps=_sum(t.sender_bps for t in trials), retransmits=_sum(t.retransmits for t in trials),
                 reverse_throughput_bps=_sum(t.reverse_throughput_bps for t in trials),
                 cpu_local_pct=_max(t.cpu_local_pct for t in trials), cpu_remote_pct=_max(t.cpu_remote_pct for t in trials),
                 packets_sent=_sum(t.packets_sent for t in trials), packets_lost=_sum(t.packets_lost for t in trials),
                 lost_percent=_lost_percent(trials), jitter_ms=_max(t.jitter_ms for t in trials),
                 congestion=first.congestion, telemetry={"pool": window, "pairs": _pairs(members, figures)}, **common)


def setups(members: list[Member]) -> list[float] | None:
    """Each pair's set-up: from its launch until its measuring began, which lasted duration_s whichever intervals
    the server printed (its last one can be missing) and ended just before its process did; None when an end was
    not seen."""
    if any(m.ended is None for m in members):
        return None
    return [m.ended - m.trial.params.duration_s - m.launched for m in members]


def setup_spread(members: list[Member]) -> float | None:
    """How far apart the pairs' set-ups were, seconds: the uncertainty of where their intervals sit beside each
    other."""
    setup = setups(members)
    return None if setup is None else round(max(setup) - min(setup), 3)


def late_starter(members: list[Member], tolerance_s: float = START_TOLERANCE_S) -> str | None:
    """Why the launch instants do not place the pairs' intervals (None: they do). Each pair's measuring began
    at its launch plus its set-up (connect, parameters, omitted seconds) and ended just before its process did;
    a pair whose set-up took longer than the others' (a retransmitted SYN: 1 s) would be placed wrongly by its
    launch, so the two anchors must agree within tolerance_s."""
    setup = setups(members)
    if setup is None:
        return None
    quickest = min(setup)
    for index, extra in enumerate(s - quickest for s in setup):
        if extra > tolerance_s:
            return (f"pair {index + 1} ({members[index].name}) began measuring {extra:.2f} s later after its launch "
                    "than the quickest pair (a slow connect?): its intervals cannot be placed beside theirs")
    return None


def slow_pairs(members: list[Member], figures: dict[int, tuple[float, float]]) -> list[str]:
    """Pairs far below the others: under SLOW_SHARE of the median of the other pairs' figures."""
    slow = []
    for index, (rate, _) in figures.items():
        others = [r for i, (r, _) in figures.items() if i != index]
        if others and rate < SLOW_SHARE * statistics.median(others):
            slow.append(f"pair {index + 1} ({members[index].name}): {rate / 1e6:.1f} Mbit/s, the others' median "
                        f"{statistics.median(others) / 1e6:.1f}")
    return slow


def _pairs(members: list[Member], figures: dict[int, tuple[float, float]]) -> list[dict[str, Any]]:
    out = []
    for index, member in enumerate(members):
        rate, seconds = figures.get(index, (None, None))
        out.append({"pair": index + 1, "client": member.client, "server": member.server, "address": member.address,
                    "status": member.trial.status, "error": member.trial.error, "throughput_bps": rate,
                    "counted_s": seconds, "run_bps": member.trial.throughput_bps,
                    "retransmits": member.trial.retransmits,
                    # iperf3's own figures of each end's host (cpu_utilization_percent host_total): which host of
                    # the pool was the limit (diagnose/facts.py busy_senders)
                    "cpu_client_pct": member.trial.cpu_local_pct, "cpu_server_pct": member.trial.cpu_remote_pct})
    return out


def _sum(values) -> Any:
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def _max(values) -> Any:
    values = [v for v in values if v is not None]
    return max(values) if values else None


def _lost_percent(trials: list[Trial]) -> float | None:
    sent, lost = _sum(t.packets_sent for t in trials), _sum(t.packets_lost for t in trials)
    if sent is None or lost is None:
        return None
    return 100.0 * lost / sent if sent else 0.0


def pair_summary(trial: Trial) -> list[str]:
    """Lines under a pooled trial's aggregate: each pair's figure, the common window, slow pairs."""
    pool, pairs = trial.telemetry.get("pool"), trial.telemetry.get("pairs") or []
    if not pool:
        return []
    spread = pool.get("setup_spread_s") or 0.0
    setups = f"; their set-ups {spread:.2f} s apart" if spread >= 0.01 else ""  # over SSH: the channels' own
    lines = [f"  {len(pairs)} pairs sent together for {pool['window_s']:.2f} s of {pool['measured_s']} s "
             f"(starts {pool['start_skew_ms']:g} ms apart{setups}); the aggregate counts only that window"
             if len(pairs) > 1
             else f"  one pair, counted over {pool['window_s']:.2f} s of {pool['measured_s']} s"]
    for pair in pairs:
        figure = "failed" if pair["throughput_bps"] is None else f"{pair['throughput_bps'] / 1e6:9.2f} Mbit/s"
        lines.append(f"  pair {pair['pair']}: {pair['client']} -> {pair['server']} ({pair['address']})  {figure}")
    lines += [f"  slow: {line}" for line in pool.get("slow", [])]
    return lines


def pair_means(telemetries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A cell's per-pair breakdown from its trials' telemetry: each pair's mean figure over the trials that
    measured it, and how often it was named slow. [] for trials of one pair without a pool."""
    by_pair: dict[int, dict[str, Any]] = {}
    for telemetry in telemetries:
        slow = " ".join((telemetry.get("pool") or {}).get("slow") or [])
        for pair in telemetry.get("pairs") or []:
            entry = by_pair.setdefault(pair["pair"], {"pair": pair["pair"], "client": pair["client"],
                                                      "server": pair["server"], "figures": [], "slow": 0})
            if pair.get("throughput_bps") is not None:
                entry["figures"].append(pair["throughput_bps"])
            entry["slow"] += f"pair {pair['pair']} (" in slow
    out = []
    for number in sorted(by_pair):
        entry = by_pair[number]
        figures = entry.pop("figures")
        out.append({**entry, "mean_bps": statistics.fmean(figures) if figures else None, "n": len(figures)})
    return out


def pair_breakdown(pairs: list[dict[str, Any]]) -> str:
    """'pair 1 94.1, pair 2 94.1 Mbit/s (pair 2 slow in 1 trial)' for a report line."""
    figures = ", ".join(f"pair {p['pair']} " + ("–" if p["mean_bps"] is None else f"{p['mean_bps'] / 1e6:.1f}")
                        for p in pairs)
    slow = [f"pair {p['pair']} slow in {p['slow']} trial{'s' if p['slow'] > 1 else ''}" for p in pairs if p["slow"]]
    return f"{figures} Mbit/s" + (f" ({'; '.join(slow)})" if slow else "")
