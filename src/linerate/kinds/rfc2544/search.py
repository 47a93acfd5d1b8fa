"""RFC 2544 throughput (section 26.1) per frame size, found with MLRsearch (FD.io CSIT's multiple
loss ratio search, PyPI `MLRsearch`): NDR, the highest load with no loss, and PDR, the highest with
at most a small loss ratio (0.5% by default, as CSIT), from one search per frame size.

Bounds of the search: the maximum load is the lower of the link's theoretical frame rate
(calc/: link / (8 x (frame + preamble, SFD and gap))) and the generator's own ceiling, measured
first (search trials of purpose "ceiling": frames sent as fast as the generator can to an address
no one answers, so the DUT does no forwarding work and nothing downstream can hold the sender
back). The table says what set each NDR (FrameResult.limit): the line rate, the DUT (the loads
above it lost frames in the DUT), or the generator (those loads failed because the sender fell
behind, or the NDR is within 5% of the generator's ceiling). In the namespace lab the DUT's
forwarding runs on the generator's kernel and CPUs, so "generator" there means that shared CPU.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from importlib.metadata import version
from typing import Any

from linerate.calc.linerate import frame_rate
from linerate.errors import ConfigError
from linerate.search.measurer import SETTLE_S, Measurer, PacketPath, PacketTrial, measure, set_load_bounds
from linerate.store.db import Store
from linerate.traffic import frames
from linerate.traffic.frames import FrameSize

DEFAULT_PDR_LOSS = 0.005
RELATIVE_WIDTH = 0.005  # the search stops when the bounds are within 0.5% of each other
GENERATOR_MARGIN = 0.95  # NDR >= 95% of the generator's ceiling: the generator was the limit
CEILING_PROBE_S = 0.5


@dataclass(frozen=True)
class SearchSettings:
    trial_duration_s: float = 1.0
    pdr_loss: float = DEFAULT_PDR_LOSS
    relative_width: float = RELATIVE_WIDTH
    max_search_s: float = 600.0
    settle_s: float = SETTLE_S  # RFC 2544 section 23: wait for frames still in the DUT before counting

    def __post_init__(self) -> None:
        if not 0.1 <= self.trial_duration_s <= 600:
            raise ConfigError("--trial-duration", f"{self.trial_duration_s!r} is out of range; use 0.1 to 600 s")
        if not 0.001 <= self.relative_width <= 0.2:
            raise ConfigError("--relative-width", f"{self.relative_width!r} is out of range; use 0.001 to 0.2 (0.005: "
                              "a search ends when its bounds are within 0.5% of each other)")
        if not 0 < self.pdr_loss < 0.5:
            raise ConfigError("--pdr-loss", f"{self.pdr_loss!r} is out of range; use a ratio above 0 and below "
                              "0.5 (0.005 is 0.5%)")

    def goals(self) -> list[dict[str, Any]]:
        """NDR and PDR, as handed to MLRsearch (and stored with the search)."""
        common = {"exceed_ratio": 0.0, "relative_width": self.relative_width,
                  "initial_trial_duration": self.trial_duration_s, "final_trial_duration": self.trial_duration_s,
                  "duration_sum": self.trial_duration_s, "preceding_targets": 2, "expansion_coefficient": 2,
                  "fail_fast": False}
        return [{"name": "NDR", "loss_ratio": 0.0, **common}, {"name": "PDR", "loss_ratio": self.pdr_loss, **common}]


@dataclass
class FrameResult:
    frame_bytes: FrameSize  # a fixed size or a mix ("imix"; traffic/frames.py)
    family: int
    theoretical_fps: float | None  # None: no link rate known (no emulated link)
    generator_max_fps: float
    ndr_fps: float | None = None
    pdr_fps: float | None = None
    trials: list[PacketTrial] = field(default_factory=list)
    replayed: int = 0
    shared_kernel: bool = False  # namespace lab: the DUT forwards on the generator's own CPUs
    measured: int = 0  # trials this search ran now (the ceiling probe included); the rest came from the store
    sender_failures: list[str] = field(default_factory=list)  # trials run again because their sender failed

    @property
    def limit(self) -> str:
        """What stopped the NDR from going higher: "line rate" (within 1% of the theoretical rate),
        "generator" (the failing loads above the NDR failed by unsent frames — the sender fell
        behind — or the NDR is within 5% of the generator's own ceiling), "DUT" (they failed by
        frames the DUT did not forward), or "no lower bound" (even the minimum load failed)."""
        if self.ndr_fps is None:
            return "no lower bound"
        if self.theoretical_fps and self.ndr_fps >= 0.99 * self.theoretical_fps:
            return "line rate"
        if self.generator_max_fps and self.ndr_fps >= GENERATOR_MARGIN * self.generator_max_fps:
            return "generator"
        above = [t for t in self.trials if t.intended_load_fps is not None and t.intended_load_fps > self.ndr_fps
                 and t.loss_ratio > 0]
        if above and sum(t.unsent for t in above) > sum(t.dut_loss for t in above):
            return "sender CPU, shared with the DUT" if self.shared_kernel else "generator"
        return "DUT"

    @property
    def generator_limited(self) -> bool:
        return self.limit in ("generator", "sender CPU, shared with the DUT")

    @property
    def mean_frame_bytes(self) -> float:
        return frames.mean_bytes(self.frame_bytes, self.family)

    def to_dict(self) -> dict[str, Any]:
        return {"frame_bytes": self.frame_bytes, "mean_frame_bytes": self.mean_frame_bytes, "family": self.family,
                "theoretical_fps": self.theoretical_fps,
                "generator_max_fps": self.generator_max_fps, "ndr_fps": self.ndr_fps, "pdr_fps": self.pdr_fps,
                "ndr_bps": _bps(self.ndr_fps, self.mean_frame_bytes), "pdr_bps": _bps(self.pdr_fps, self.mean_frame_bytes),
                "ndr_share": None if self.ndr_fps is None or not self.theoretical_fps else self.ndr_fps / self.theoretical_fps,
                "pdr_share": None if self.pdr_fps is None or not self.theoretical_fps else self.pdr_fps / self.theoretical_fps,
                "limit": self.limit, "generator_limited": self.generator_limited, "trials": len(self.trials),
                **({"sender_failures": self.sender_failures} if self.sender_failures else {})}


def _bps(fps: float | None, frame_bytes: float) -> float | None:
    """Frame bit rate, as RFC 2544 tables give it (the frames themselves, not preamble and gap); a
    mix counts its mean frame."""
    return None if fps is None else fps * frame_bytes * 8


def library_version() -> str:
    return f"MLRsearch {version('MLRsearch')}"


def _trial_from_row(row) -> PacketTrial:
    values = {f.name: row[f.name] for f in fields(PacketTrial)}
    return PacketTrial(**{**values, "dut_counters": json.loads(values["dut_counters"]),
                          "argv": tuple(json.loads(values["argv"]))})


def search_frame_size(path: PacketPath, store: Store, experiment_id: int, params: dict[str, Any],
                      settings: SearchSettings, on_trial=None) -> FrameResult:
    """One frame size: the generator's ceiling, then NDR and PDR, against the path's line rate.
    Every trial is stored as it ends; a search already stored for these params is continued (its
    trials replayed), never repeated."""
    from MLRsearch import Config, MultipleLossRatioSearch, SearchGoal

    frame_bytes, family = params["frame_bytes"], params["family"]
    goals = settings.goals()
    row = store.ensure_search(experiment_id, params, goals, library_version())
    stored = [_trial_from_row(r) for r in store.search_trials(row["id"])]
    seq = len(stored)
    link_bps = path.link_bps
    theoretical = frame_rate(link_bps, frames.mean_bytes(frame_bytes, family)).frames_per_s if link_bps else None
    ceiling_trials = [t for t in stored if t.intended_load_fps is None]
    if ceiling_trials:
        probe = ceiling_trials[0]
    else:
        count = max(10_000, round(min(theoretical or 2_000_000, 2_000_000) * CEILING_PROBE_S))
        probe = measure(path, frame_bytes, CEILING_PROBE_S, None, count=count, settle_s=min(0.1, settings.settle_s),
                        to_dut=False)
        store.add_search_trial(row["id"], seq, "ceiling", probe.to_record())
        seq += 1
    generator_max = probe.sent / probe.send_s if probe.send_s > 0 else 0.0
    result = FrameResult(frame_bytes, family, theoretical, generator_max, trials=[probe],
                         shared_kernel=path.shared_kernel, measured=0 if ceiling_trials else 1)
    store.update_search(row["id"], generator=path.generator, theoretical_fps=theoretical,
                        generator_max_fps=generator_max)

    def keep(trial: PacketTrial, replayed: bool) -> None:
        nonlocal seq
        result.trials.append(trial)
        if not replayed:
            store.add_search_trial(row["id"], seq, "search", trial.to_record())
            seq += 1
            result.measured += 1
        if on_trial is not None:
            on_trial(result, trial, replayed)

    measurer = Measurer(path, frame_bytes, keep, replay=[t for t in stored if t.intended_load_fps is not None],
                        settle_s=settings.settle_s)
    config = Config()
    config.goals = [SearchGoal(**{k: v for k, v in goal.items() if k != "name"}) for goal in goals]
    max_load = min(x for x in (theoretical, generator_max) if x) if (theoretical or generator_max) else 1e6
    set_load_bounds(config, max(1.0, max_load / 1000), max_load, "--link")
    config.search_duration_max = settings.max_search_s
    config.warmup_duration = None
    try:
        found = MultipleLossRatioSearch(config=config).search(measurer=measurer, debug=lambda _: None)
    except Exception as exc:
        store.update_search(row["id"], status="failed", error=str(exc)[:500], ended_at=time.time())
        raise
    for goal, spec in zip(config.goals, goals):
        throughput = found[goal].conditional_throughput
        setattr(result, f"{spec['name'].lower()}_fps", None if throughput is None else float(throughput))
    result.replayed = measurer.replayed
    result.sender_failures = list(measurer.sender_failures)
    store.update_search(row["id"], status="done", ended_at=time.time(), results=result.to_dict())
    return result
