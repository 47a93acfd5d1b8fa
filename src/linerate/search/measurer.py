"""One packet-rate trial, and the measurer MLRsearch drives.

A trial offers `load x duration` frames of one size and counts them three ways: what the generator
emitted (its own summary), what reached the server (a counter there, read before and after, with a
settle time for frames still queued in the DUT, RFC 2544 section 23), and the DUT's interface
counters. Three outcomes are kept apart, because a report that calls them all "loss" blames the
wrong box (a known trap in TRex and CSIT reports):

- forwarded: counted at the server;
- DUT loss: emitted but not forwarded;
- unsent: not offered in time at the intended rate — the generator fell behind (its CPU, or a
  device pushing back), so the DUT never saw the intended load.

MLRsearch (FD.io CSIT's library) counts unsent frames as bad too (`MeasurementResult.loss_ratio`),
so a load the generator could not offer is never a lower bound; the table then says whether the
generator or the DUT set the limit. MLRsearch 1.2.1 names the forwarded count `forwarding_count`
(upstream later renamed it `forwarded_count`): the result is built from offered and loss counts,
which both spell the same.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol

from linerate.errors import ConfigError, LinerateError
from linerate.traffic.frames import FrameSize
from linerate.traffic.trafgen import Sent

LATE_TOLERANCE = 0.001  # sending may overrun the intended duration by 0.1% (timer granularity)
SETTLE_S = 0.5  # frames in flight and in the DUT's queues when the generator stops
SENDER_ATTEMPTS = 3  # a trial whose sender failed (no summary under load, killed) is run again, this often


class PacketPath(Protocol):
    """A client -> DUT -> server path that can send frames and count them (testbed/lab_path.py, testbed/ssh_path.py)."""

    generator: str  # "trafgen 0.6.8"
    link_bps: float | None  # the path's line rate (None: unknown)
    shared_kernel: bool  # the DUT forwards on the sender's CPUs (the namespace lab)

    def send(self, frame: FrameSize, rate_pps: int | None, count: int, *, to_dut: bool = True) -> Sent:
        """A SentBy when the path knows the generator's command line (stored with the trial)."""
        ...

    def forwarded(self) -> int: ...  # cumulative frames counted at the server

    def dut_counters(self) -> dict[str, int]: ...  # cumulative DUT interface counters


@dataclass(frozen=True)
class SentBy(Sent):
    """What a PacketPath's send returns when it knows the command that sent: the generator's argv
    (trafgen or iperf3, as run on the client), stored with the trial as throughput trials store theirs."""

    argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class PacketTrial:
    intended_duration_s: float
    intended_load_fps: float | None  # None: unpaced (the generator's ceiling probe)
    intended_count: int
    sent: int
    forwarded: int
    dut_loss: int
    unsent: int
    send_s: float
    dut_counters: dict[str, int] = field(default_factory=dict)
    started_at: float | None = None
    ended_at: float | None = None
    argv: tuple[str, ...] = ()  # the generator's command line (empty: the path did not say)

    @property
    def offered(self) -> int:
        return self.intended_count - self.unsent

    @property
    def loss_ratio(self) -> float:
        """What MLRsearch judges a trial by: DUT loss and unsent frames over the intended count."""
        return 0.0 if not self.intended_count else (self.intended_count - min(self.forwarded, self.offered)) / self.intended_count

    def to_record(self) -> dict:
        return {**asdict(self), "argv": list(self.argv)}

    def to_result(self):
        from MLRsearch import MeasurementResult

        offered = self.offered
        return MeasurementResult(intended_duration=self.intended_duration_s, intended_load=self.intended_load_fps,
                                 intended_count=self.intended_count, offered_count=offered,
                                 loss_count=offered - min(self.forwarded, offered),
                                 # a trial lasts its window at least: a sender that put a short trial's few frames
                                 # out in one burst (95 us at 100 kbit/s) must not count as a 95 us trial, or
                                 # MLRsearch repeats it until its duration sum is reached
                                 offered_duration=max(self.send_s, self.intended_duration_s))


def set_load_bounds(config, min_load: float, max_load: float, field: str) -> None:
    """An MLRsearch Config's load range, the minimum first: Config checks each value as it is set against
    the other (its min_load defaults to 9001, so a max_load of 9001 or less set first is refused with a
    ValueError). A range with no room in it is the user's figure: one line naming `field`."""
    if not max_load > min_load:
        raise ConfigError(field, f"leaves no room to search ({min_load:g} .. {max_load:g} per second); give a higher "
                          "rate or a faster link")
    config.min_load = min_load
    config.max_load = max_load


def disturbed(where: str, counted: int, sent: int) -> str:
    """Why a trial whose receiver counted more of its frames than were sent does not count."""
    return (f"the {where} counted {counted:,} frames of this trial's flow, but {sent:,} were sent: another sender is "
            "on this path (a killed command's generator still running?); this trial does not count")


def unsent_frames(intended_count: int, sent: Sent, duration_s: float, tolerance: float = LATE_TOLERANCE) -> int:
    """Frames not offered within the intended duration: never emitted, or emitted late because the
    sender took longer than the duration plus `tolerance` of it (then only what it managed at its
    achieved rate counts)."""
    missing = max(0, intended_count - sent.packets)
    if sent.cpu_s <= duration_s * (1 + tolerance) or sent.packets == 0:
        return missing
    in_time = math.floor(sent.packets * duration_s / sent.cpu_s)
    return max(missing, intended_count - in_time)


def measure(path: PacketPath, frame_bytes: FrameSize, duration_s: float, load_fps: float | None, *,
            count: int | None = None, settle_s: float = SETTLE_S, to_dut: bool = True) -> PacketTrial:
    intended = count if count is not None else max(1, round(load_fps * duration_s))
    forwarded_before, dut_before = path.forwarded(), path.dut_counters()
    started = time.time()
    sent = path.send(frame_bytes, None if load_fps is None else max(1, round(load_fps)), intended, to_dut=to_dut)
    time.sleep(settle_s)
    forwarded = path.forwarded() - forwarded_before
    dut_after = path.dut_counters()
    deltas = {k: dut_after[k] - dut_before[k] for k in dut_after if k in dut_before}
    unsent = 0 if load_fps is None else unsent_frames(intended, sent, duration_s)
    if to_dut and forwarded > sent.packets:
        raise LinerateError(disturbed("server", forwarded, sent.packets))
    lost = max(0, sent.packets - forwarded) if to_dut else 0  # a ceiling probe is addressed to no one
    argv = sent.argv if isinstance(sent, SentBy) else ()
    return PacketTrial(duration_s, load_fps, intended, sent.packets, forwarded if to_dut else 0, lost,
                       unsent, sent.cpu_s, deltas, started, time.time(), argv)


class Measurer:
    """MLRsearch's measurer (its AbstractMeasurer interface: measure(duration, load); the search calls
    that method and needs nothing else) over a PacketPath. Every trial goes to `on_trial` the moment it
    ends (the store commits it). `replay`: trials of an interrupted search, served back in order
    while the search asks for exactly them (MLRsearch is deterministic given the same results), so
    a resumed search continues where it stopped without measuring anything twice."""

    def __init__(self, path: PacketPath, frame_bytes: FrameSize, on_trial: Callable[[PacketTrial, bool], None],
                 replay: Sequence[PacketTrial] = (), settle_s: float = SETTLE_S):
        self.path, self.frame_bytes, self.on_trial, self.settle_s = path, frame_bytes, on_trial, settle_s
        self.sender_failures: list[str] = []  # trials that failed to measure and were run again (said in the results)
        self.replay = list(replay)
        self.replayed = 0

    def measure(self, intended_duration: float, intended_load: float):
        if self.replay:
            stored = self.replay[0]
            if (math.isclose(stored.intended_duration_s, intended_duration, rel_tol=1e-9)
                    and stored.intended_load_fps is not None
                    and math.isclose(stored.intended_load_fps, intended_load, rel_tol=1e-9)):
                self.replay.pop(0)
                self.replayed += 1
                self.on_trial(stored, True)
                return stored.to_result()
            self.replay.clear()  # the search went elsewhere: the rest of the old trials are not asked for
        for attempt in range(1, SENDER_ATTEMPTS + 1):
            try:
                trial = measure(self.path, self.frame_bytes, intended_duration, intended_load, settle_s=self.settle_s)
                break
            except LinerateError as exc:  # the sender or a counter read failed this trial, not the DUT
                self.sender_failures.append(f"trial at {intended_load:,.0f} frames/s, attempt {attempt}: {exc}")
                if attempt == SENDER_ATTEMPTS:
                    raise LinerateError(f"the trial at {intended_load:,.0f} frames/s failed {SENDER_ATTEMPTS} times "
                                        f"in a row (last: {exc}); the search stops") from None
        self.on_trial(trial, False)
        return trial.to_result()
