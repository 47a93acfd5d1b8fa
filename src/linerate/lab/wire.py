"""The wire meter: what an emulated link really carried, read from the kernel's qdisc counters.

iperf3's goodput is measured by an application between two timer ticks, so a short trial can read
a few tenths of a percent high or low (data that crossed the link before the window is read inside
it). The root qdisc's counters on a shaped port count every wire frame — tc's byte and packet
counters already count a GSO packet as its segments (qdisc_pkt_len_init, bstats_update) — so
bytes + 24 bytes per frame (FCS, preamble/SFD, inter-frame gap) is the link's true load.
Each sample is bracketed by monotonic clock readings, so a rate between two samples comes with
bounds: at least bits / longest possible interval, at most bits / shortest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from linerate.errors import ParseError
from linerate.exec import Executor
from linerate.topology.link import WIRE_OVERHEAD

T = TypeVar("T")


def parse_root_qdisc(text: str) -> tuple[int, int]:
    """`tc -s -j qdisc show dev IF` -> (bytes, packets) of the root qdisc."""
    try:
        qdiscs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"tc -s -j qdisc output is not JSON: {exc.msg}") from None
    for qdisc in qdiscs:
        if qdisc.get("root"):
            return int(qdisc["bytes"]), int(qdisc["packets"])
    raise ParseError("tc -s -j qdisc output has no root qdisc")


def wire_bits(byte_count: int, packets: int) -> int:
    return (byte_count + WIRE_OVERHEAD * packets) * 8


@dataclass(frozen=True)
class WireSample:
    started: float  # time.monotonic() before asking the kernel
    finished: float  # ... and after the answer came back
    bits: int


@dataclass(frozen=True)
class WireRate:
    low_bps: float
    high_bps: float

    @property
    def mid_bps(self) -> float:
        return (self.low_bps + self.high_bps) / 2


def rate_between(first: WireSample, second: WireSample) -> WireRate:
    bits = second.bits - first.bits
    return WireRate(bits / (second.finished - first.started), bits / (second.started - first.finished))


class WireMeter:
    def __init__(self, executor: Executor, ifname: str):
        self.executor = executor
        self.argv = ["tc", "-s", "-j", "qdisc", "show", "dev", ifname]

    def sample(self) -> WireSample:
        started = time.monotonic()
        text = self.executor.run(self.argv, timeout_s=10).stdout
        finished = time.monotonic()
        return WireSample(started, finished, wire_bits(*parse_root_qdisc(text)))


def measure_during(work: Callable[[], T], meter: WireMeter, window: tuple[float, float]) -> tuple[T, WireRate]:
    """Run `work` (e.g. a trial) in a thread and meter the wire from window[0] to window[1] seconds
    after it starts — pick a window inside the trial's measured, steady part."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        begun = time.monotonic()
        future = pool.submit(work)
        time.sleep(window[0])
        first = meter.sample()
        time.sleep(max(0.0, begun + window[1] - time.monotonic()))
        second = meter.sample()
        return future.result(), rate_between(first, second)
