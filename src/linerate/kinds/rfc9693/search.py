"""The two RFC 9693 searches over state trials (search/state_path.py), pure given a trial function.

Maximum connection establishment rate: MLRsearch (FD.io CSIT's library, as rfc2544 uses it) over
the rate of phase 1 with C = `connections` per trial; a trial's loss is every connection that did
not complete both phases (or was not sent on time), and the result is the NDR: the highest rate
with none lost. Its bounds: the generator's own ceiling for these frames (a trial of frames sent to
no one, as rfc2544 measures it), the link's frame rate, `max_rate`.

Connection-tracking-table capacity, after siitperf's cttc.sh (the RFC 9693 authors' tester):
doubling from `start_connections` while a size holds, then bisection between the last size that
held and the first that did not, until they are within `capacity_precision`. cttc.sh runs a whole
rate search per size and accepts it while the rate found stays at gamma x the last rate; here one
trial per size at gamma x the establishment rate (R0) asks the same question of a monotone DUT —
"does C still get through at gamma x R0?" — for a tenth of the trials. A size that fails is tried
once more before it counts as failed, so one lost frame of a noisy host does not end the search; a
size whose every connection crossed and was validated held, even where the generator sent some frames
late (table_held).

What limited the capacity (`capacity_limit`), from the trials' own telemetry: the state table
(its count reached the limit, or it evicted or refused entries), the state timeout (opening C
connections at that rate takes longer than the DUT keeps an unanswered UDP state), the DUT's
forwarding (phase 1 frames lost while the table had room), or nothing up to the search's bound
(the generator's 4-tuples).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linerate.dut.state_table import FULL_SHARE, firewall, state_deltas
from linerate.search.measurer import set_load_bounds
from linerate.search.state_path import StateTrial

NOMINAL_DURATION_S = 1.0  # what MLRsearch is told a trial lasts (a trial is C connections, whatever its rate)
EVICTION_KEYS = ("early_drop", "insert_failed", "drop", "memory", "state_limit", "memory_failures")
# the timeout of a UDP state that has seen one packet and no reply, per firewall (the DUT's own value
# where read): Linux nf_conntrack_udp_timeout 30 s (Documentation/networking/nf_conntrack-sysctl.rst),
# pf udp.first 60 s (pf.conf(5)), ipfw net.inet.ip.fw.dyn_udp_lifetime 10 s (ipfw(8))
UDP_TIMEOUT_KEY = {"conntrack": "udp_timeout", "pf": "udp.first", "ipfw": "dyn_udp_lifetime"}
UDP_TIMEOUT_DEFAULT_S = {"conntrack": 30.0, "pf": 60.0, "ipfw": 10.0}
UDP_TIMEOUT_WHAT = {"conntrack": "net.netfilter.nf_conntrack_udp_timeout", "pf": "pf udp.first",
                    "ipfw": "net.inet.ip.fw.dyn_udp_lifetime"}
TABLE_LIMIT_WHAT = {"conntrack": "net.netfilter.nf_conntrack_max", "pf": "pf 'set limit states'",
                    "ipfw": "net.inet.ip.fw.dyn_max"}

Trial = Callable[[str, int, float | None], StateTrial]  # (purpose, connections, rate) -> the trial, stored


def udp_timeout(os_name: str, timeouts: dict | None) -> tuple[float, str]:
    """Seconds an unanswered UDP state lives on this DUT, and the setting's name."""
    fw = firewall(os_name, timeouts)
    value = (timeouts or {}).get(UDP_TIMEOUT_KEY[fw])
    return (float(value) if value else UDP_TIMEOUT_DEFAULT_S[fw]), UDP_TIMEOUT_WHAT[fw]


class _Measurer:
    """MLRsearch's measurer over state trials (its AbstractMeasurer interface: measure(duration, load))."""

    def __init__(self, trial: Trial, connections: int):
        self.trial, self.connections = trial, connections

    def measure(self, intended_duration: float, intended_load: float):
        from MLRsearch import MeasurementResult

        done = self.trial("rate", self.connections, float(intended_load))
        offered = done.connections - done.unsent
        # the trial counts as the nominal duration MLRsearch asked for: its duration_sum adds trial durations,
        # and a trial of C connections is one trial at any rate (its sending time would be a fraction of it)
        return MeasurementResult(intended_duration=intended_duration, intended_load=intended_load,
                                 intended_count=done.connections, offered_count=offered,
                                 loss_count=done.lost, offered_duration=intended_duration)


def rate_bounds(ceiling: StateTrial, line_fps: float | None, max_rate: float) -> tuple[float, float]:
    """(min_load, max_load) of the rate search: the lowest of the generator's ceiling, the line's frame
    rate and max_rate; the minimum a thousandth of it."""
    generator = ceiling.achieved_rate or max_rate
    top = min(x for x in (generator, line_fps, max_rate) if x)
    return max(1.0, top / 1000), top


def search_rate(trial: Trial, connections: int, min_load: float, max_load: float, relative_width: float,
                max_search_s: float = 900.0) -> float | None:
    """The NDR of phase 1 with validation, connections/s (None: even the minimum lost connections)."""
    from MLRsearch import Config, MultipleLossRatioSearch, SearchGoal

    config = Config()
    config.goals = [SearchGoal(loss_ratio=0.0, exceed_ratio=0.0, relative_width=relative_width,
                               initial_trial_duration=NOMINAL_DURATION_S, final_trial_duration=NOMINAL_DURATION_S,
                               duration_sum=NOMINAL_DURATION_S, preceding_targets=2, expansion_coefficient=2,
                               fail_fast=False)]
    set_load_bounds(config, min_load, max_load, "max_rate")
    config.search_duration_max = max_search_s
    config.warmup_duration = None
    found = MultipleLossRatioSearch(config=config).search(measurer=_Measurer(trial, connections), debug=lambda _: None)
    throughput = found[next(iter(config.goals))].conditional_throughput
    return None if throughput is None else float(throughput)


@dataclass
class CapacityResult:
    held: int | None = None  # the largest size that held (the capacity)
    failed: int | None = None  # the smallest that did not (None: every size up to the bound held)
    rate: float = 0.0  # connections/s the capacity trials opened at last (gamma x R0, halved on forwarding loss)
    bound: int = 0  # max_connections
    trials: list[StateTrial] = field(default_factory=list)
    lowered: list[tuple[int, float]] = field(default_factory=list)  # (size, new rate) each time the rate was halved


def table_held(done: StateTrial) -> bool:
    """Every connection crossed the DUT and its reply came back through it: the table held all C at once.
    Frames the generator sent late (a loaded host) count too — late is still inside the UDP timeout (a
    trial's sending takes milliseconds), and what is asked here is the table's size, not the rate (CI:
    a 512-entry table read as 199 because trials at 200 had a few late frames and nothing lost)."""
    return done.forwarded >= done.connections and done.validated >= done.connections


def forwarding_loss(done: StateTrial) -> bool:
    """Phase 1 lost frames while the table had room and evicted or refused nothing: the DUT could not
    forward (or queue) them at this rate — a rate failure, not a capacity one."""
    table = table_evidence(done)
    count, limit = table.get("state_count"), table.get("state_max")
    full = bool(limit) and (count or 0) >= FULL_SHARE * limit
    return done.forwarded < done.connections - done.unsent and not full and not any(k in table for k in EVICTION_KEYS)


def search_capacity(trial: Trial, rate: float, start: int, bound: int, precision: float,
                    timeout_s: float = 30.0) -> CapacityResult:
    """Doubling from `start` while a size holds, then bisection; a failure confirmed by a second trial.
    A trial that fails by forwarding loss with room in the table (`forwarding_loss`: a burst its queues
    could not hold) is repeated at half the rate, while opening the size still takes under half the
    DUT's UDP timeout — the size is then judged by the table, not by the rate."""
    result = CapacityResult(rate=rate, bound=bound)

    def holds(size: int) -> bool:
        failures = 0
        while failures < 2:
            done = trial("capacity", size, result.rate)
            result.trials.append(done)
            if table_held(done):
                return True
            if forwarding_loss(done) and size / (result.rate / 2) < timeout_s / 2:
                result.rate /= 2
                result.lowered.append((size, result.rate))
                continue
            failures += 1
        return False

    size = min(start, bound)
    while True:
        if not holds(size):
            result.failed = size
            break
        result.held = size
        if size >= bound:
            return result
        size = min(2 * size, bound)
    low = result.held or 0
    while result.failed - low > max(1, precision * max(low, 1)):
        middle = (low + result.failed) // 2
        if holds(middle):
            low = result.held = middle
        else:
            result.failed = middle
    return result


def table_evidence(done: StateTrial) -> dict[str, Any]:
    """The DUT's table at its fullest in a trial (after phase 1) and what it evicted or refused over it."""
    between = done.state_between or {}
    deltas = state_deltas(done.state_before or None, done.state_after or between) if done.state_after else {}
    return {"state_count": between.get("state_count"), "state_max": between.get("state_max"),
            **{key: deltas[key] for key in EVICTION_KEYS if deltas.get(key)}}


def capacity_limit(result: CapacityResult, os_name: str, timeouts: dict | None, table_setting: str | None) -> dict:
    """{"limit", "evidence"}: what stopped the capacity from going higher, from the failing trials."""
    timeout_s, timeout_what = udp_timeout(os_name, timeouts)
    fw = firewall(os_name, timeouts)
    if result.failed is None:
        return {"limit": "search bound", "evidence": (
            f"every size up to {result.bound:,} connections held (the generator's 4-tuples: one source-port range to "
            "one port); the table holds at least that many")}
    failing = [t for t in result.trials if t.connections == result.failed]
    last = failing[-1]
    table = table_evidence(last)
    count, limit = table.get("state_count"), table.get("state_max")
    evicted = {k: v for k, v in table.items() if k in EVICTION_KEYS}
    opening_s = result.failed / result.rate if result.rate else 0.0
    if limit and ((count or 0) >= FULL_SHARE * limit or evicted):
        setting = f"{TABLE_LIMIT_WHAT[fw]} = {limit:,}" + (f" ({table_setting})" if table_setting else "")
        said = ", ".join(f"{k} +{v:,}" for k, v in evicted.items())
        return {"limit": "state table", "evidence": (
            f"at {result.failed:,} connections the table held {count:,} of {limit:,} entries"
            + (f" ({said})" if said else "") + f": {setting}")}
    if opening_s + 1 >= timeout_s:
        return {"limit": "state timeout", "evidence": (
            f"opening {result.failed:,} connections at {result.rate:,.0f}/s takes {opening_s:.1f} s, near or past "
            f"the {timeout_s:g} s an unanswered UDP state lives ({timeout_what}): the first states expired before "
            "they were validated")}
    if last.forwarded < last.connections - last.unsent:
        return {"limit": "DUT forwarding", "evidence": (
            f"at {result.failed:,} connections opened at {result.rate:,.0f}/s phase 1 lost "
            f"{last.connections - last.unsent - last.forwarded:,} frames while the table held "
            f"{count if count is not None else '?'} of {limit if limit else '?'} entries; a lower rate would take "
            f"{result.failed / (result.rate / 2):.1f} s, past half the {timeout_s:g} s UDP timeout")}
    if last.unsent:
        return {"limit": "generator", "evidence": (
            f"at {result.failed:,} connections the generator sent {last.unsent:,} frames late")}
    return {"limit": "validation", "evidence": (
        f"at {result.failed:,} connections {last.forwarded - last.validated:,} replies did not pass the DUT with the "
        f"table at {count if count is not None else '?'} of {limit if limit else '?'} entries and no eviction counted")}
