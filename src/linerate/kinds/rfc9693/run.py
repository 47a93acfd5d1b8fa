"""Running rfc9693 under the one runner: for every combination of the lab's axes x family, repeated
`repetitions` times (rounds in an order shuffled from the seed, as rfc2544 and cps run them): the
generator's ceiling, the establishment-rate search, then the capacity search (kinds/rfc9693/search.py),
each trial through the testbed's state path (search/state_path.py).

Storage: one row of `searches` per combination and repetition (params: test, family, repetition and
the lab's axes; goals: the options; library: LIBRARY; generator; results: its summary,
Rfc9693Result.to_dict, when it ends), every trial a row of `search_trials` (purpose "ceiling", "rate"
or "capacity"; StateTrial.to_record) and its own figures (validated replies, the DUT's state table
before, between and after the phases) a row of `rfc9693_trials`, both committed in one transaction
the moment the trial ends. A resumed run replays the
stored trials in order while the searches ask for exactly them (both are deterministic given the same
outcomes) and measures only what is missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from linerate.axes import lab_key
from linerate.calc.linerate import frame_rate
from linerate.dut.base import dut_os_family
from linerate.dut.state_table import linger_seconds, littles_law_bound
from linerate.errors import LinerateError
from linerate.experiment.plugins import Event, RunContext
from linerate.kinds.base import read_or_empty, rounds, search_pairs, testbeds_open
from linerate.kinds.rfc9693.options import Rfc9693Options
from linerate.kinds.rfc9693.search import (CapacityResult, capacity_limit, rate_bounds, search_capacity, search_rate,
                                           table_evidence, udp_timeout)
from linerate.search.state_path import StateTrial
from linerate.store.db import Store

LIBRARY = "linerate rfc9693 1 (MLRsearch rate; doubling, then bisection capacity)"
SYSCTL_KEYS = ("net.netfilter.nf_conntrack_max", "net.inet.ip.fw.dyn_max")


def search_params(params: dict[str, Any], family: int, repetition: int) -> dict[str, Any]:
    return {"test": "rfc9693", "family": family, "repetition": repetition, **params}


@dataclass
class Rfc9693Result:
    params: dict[str, Any]
    frame_bytes: int
    connections: int
    ceiling_rate: float | None = None
    rate: float | None = None  # the establishment rate (NDR), connections/s
    rate_trial: StateTrial | None = None  # the passing trial at that rate
    capacity: CapacityResult | None = None
    limit: dict = field(default_factory=dict)
    timeouts: dict = field(default_factory=dict)
    os_name: str = "linux"
    trials: list[StateTrial] = field(default_factory=list)
    replayed: int = 0
    generator: str | None = None

    def rate_limit(self) -> str | None:
        """What the establishment rate reached: the generator's ceiling (within 5%), or the DUT."""
        if self.rate is None:
            return None
        if self.ceiling_rate and self.rate >= 0.95 * self.ceiling_rate:
            return "generator"
        return "DUT"

    def to_dict(self) -> dict[str, Any]:
        cap = self.capacity
        table = table_evidence(self.rate_trial) if self.rate_trial else {}
        limit_entries = next((t.state_between.get("state_max") for t in reversed(self.trials)
                              if t.state_between.get("state_max")), None)
        timeout_s, timeout_what = udp_timeout(self.os_name, self.timeouts)
        linger = linger_seconds(self.os_name, self.timeouts)
        return {
            "params": self.params, "frame_bytes": self.frame_bytes, "generator": self.generator,
            "establishment_rate": self.rate,
            "establishment_rate_achieved": None if self.rate_trial is None else self.rate_trial.achieved_rate,
            "rate_connections": self.connections, "generator_ceiling": self.ceiling_rate,
            "rate_limit": self.rate_limit(), "rate_trial_s": None if self.rate_trial is None else self.rate_trial.send_s,
            "capacity": None if cap is None else cap.held, "capacity_failed_at": None if cap is None else cap.failed,
            "capacity_rate": None if cap is None else cap.rate, "capacity_bound": None if cap is None else cap.bound,
            "capacity_rate_lowered": [] if cap is None else [list(item) for item in cap.lowered],
            "limit": self.limit.get("limit"), "limit_evidence": self.limit.get("evidence"),
            "state_max": limit_entries, "state_at_rate": table, "udp_timeout_s": timeout_s,
            "udp_timeout_setting": timeout_what, "timeouts": self.timeouts,
            # Little's law: the table's entries over how long a state lives -> the new connections/s it sustains
            "sustained_udp_bound": None if not limit_entries else littles_law_bound(limit_entries, timeout_s),
            "sustained_tcp_bound": None if not limit_entries else littles_law_bound(limit_entries, linger),
            "tcp_linger_s": linger,
            "trials": len(self.trials), "replayed": self.replayed,
            "rate_trials": sum(1 for t in self.trials if t.purpose == "rate"),
            "capacity_trials": sum(1 for t in self.trials if t.purpose == "capacity")}


FIGURES = "rfc9693_trials"  # the table of a trial's own figures (store/schema.py)


def stored_trials(store: Store, row: Any) -> list[StateTrial]:
    by_seq = store.search_trial_figures(row["id"], FIGURES)
    return [StateTrial.from_stored(r, by_seq[r["seq"]]) for r in store.search_trials(row["id"]) if r["seq"] in by_seq]


class _Trials:
    """The trial function the searches call: the next stored trial while it is exactly what is asked
    (resume), else a new one, measured and stored (its row and its figures in one transaction)."""

    def __init__(self, store: Store, row: Any, path: Any, frame_bytes: int, result: Rfc9693Result, say):
        self.store, self.row, self.path, self.frame_bytes, self.result, self.say = store, row, path, frame_bytes, result, say
        self.replay = stored_trials(store, row)
        self.next_seq = max((r["seq"] for r in store.search_trials(row["id"])), default=-1) + 1
        self.replay_at = 0

    def __call__(self, purpose: str, connections: int, rate: float | None) -> StateTrial:
        if self.replay_at < len(self.replay):
            stored = self.replay[self.replay_at]
            same_rate = (rate is None and stored.rate is None) or (
                rate is not None and stored.rate is not None and abs(stored.rate - rate) <= 1e-9 * max(rate, 1))
            if stored.purpose == purpose and stored.connections == connections and same_rate:
                self.replay_at += 1
                self.result.replayed += 1
                self.result.trials.append(stored)
                return stored
            self.replay_at = len(self.replay)  # the search went elsewhere; later stored trials are not asked for
        if self.path is None:
            raise LinerateError("rfc9693: a stored search asked for a trial that is not stored (report only)")
        done = self.path.trial(purpose, connections, rate, self.frame_bytes)
        self.store.add_search_trial(self.row["id"], self.next_seq, purpose, done.to_record(), (FIGURES, done.figures()))
        self.next_seq += 1
        self.result.trials.append(done)
        if rate is None:
            self.say(f"  ceiling: the generator alone sent {done.sent:,} frames at {done.achieved_rate or 0:,.0f}/s")
            return done
        rate_text = f"{rate:,.0f} conn/s"
        self.say(f"  {purpose}: {connections:,} connections at {rate_text}: forwarded {done.forwarded:,}, validated "
                 f"{done.validated:,}{', ' + str(done.unsent) + ' sent late' if done.unsent else ''} -> "
                 f"{'pass' if done.passed else 'fail'}")
        return done


def search_combination(store: Store, experiment_id: int, params: dict[str, Any], options: Rfc9693Options,
                       path: Any, os_name: str, table_setting: str | None, say=lambda text: None) -> Rfc9693Result:
    """Ceiling, establishment rate, capacity for one combination and repetition; stored as it goes."""
    family = params["family"]
    frame = options.frame_for(family)
    row = store.ensure_search(experiment_id, params, options.goals(), LIBRARY)
    result = Rfc9693Result(params, frame, options.connections, os_name=os_name)
    trials = _Trials(store, row, path, frame, result, say)
    if path is not None:
        result.generator = path.generator
        store.update_search(row["id"], generator=path.generator)
        result.timeouts = read_or_empty(path.state_timeouts)()
    try:
        ceiling = trials("ceiling", max(options.connections, 5000) if options.max_connections >= 5000
                         else options.connections, None)
        result.ceiling_rate = ceiling.achieved_rate
        link_bps = None if path is None else path.link_bps
        line_fps = frame_rate(link_bps, frame).frames_per_s if link_bps else None
        low, high = rate_bounds(ceiling, line_fps, options.max_rate)
        result.rate = search_rate(trials, options.connections, low, high, options.relative_width)
        if result.rate is not None:
            result.rate_trial = next((t for t in reversed(result.trials) if t.purpose == "rate" and t.passed
                                      and t.rate is not None and abs(t.rate - result.rate) <= 1e-6 * result.rate), None)
            timeout_s, _ = udp_timeout(os_name, result.timeouts)
            result.capacity = search_capacity(trials, options.gamma * result.rate, options.start_connections,
                                              options.max_connections, options.capacity_precision, timeout_s)
            result.limit = capacity_limit(result.capacity, os_name, result.timeouts, table_setting)
        else:
            result.limit = {"limit": "no rate", "evidence": (
                f"even {low:,.0f} connections/s lost connections of {options.connections:,}: no establishment rate, "
                "so no capacity search")}
    except Exception as exc:
        store.update_search(row["id"], status="failed", error=str(exc)[:500], ended_at=time.time())
        raise
    store.update_search(row["id"], status="done", ended_at=time.time(), results=result.to_dict())
    return result


@dataclass
class Rfc9693Run:
    experiment_id: int
    seed: int
    resumed: bool
    results: list[Rfc9693Result] = field(default_factory=list)

    @property
    def trials_measured(self) -> int:
        return sum(len(r.trials) - r.replayed for r in self.results)

    def summary(self, where: str) -> str:
        return (f"{len(self.results)} rfc9693 searches ({self.trials_measured} trials measured) into {where}, "
                f"experiment {self.experiment_id}{' (resumed)' if self.resumed else ''}, seed {self.seed}")


def table_setting(params: dict[str, Any]) -> str:
    """Where the table's limit came from: the run's --dut-sysctls, or the DUT as it was."""
    for spec in str(params.get("dut_sysctls") or "").split(","):
        name = spec.split("=", 1)[0].strip()
        if name in SYSCTL_KEYS:
            return f"set by dut_sysctls {spec.strip()}"
    return "the DUT's own setting"


def run_rfc9693(context: RunContext, options: Rfc9693Options) -> Rfc9693Run:
    experiment = context.experiment
    run = Rfc9693Run(context.experiment_id, context.seed, context.resumed)
    say = lambda text: context.on_event(Event("message", message=text))  # noqa: E731
    plan = search_pairs(experiment)
    with testbeds_open(context, [params for params, _ in plan]) as beds:
        os_name = dut_os_family(context.store.experiment(context.experiment_id).environment) or "linux"
        for repetition, (params, family) in rounds(plan, experiment.repetitions, context.seed):
            bed = beds[lab_key(params)]
            bed.apply_knobs()  # this combination's DUT knobs (journaled on real hosts), before its trials
            with bed.state_path(family) as path:
                result = search_combination(context.store, context.experiment_id,
                                            search_params(params, family, repetition), options, path, os_name,
                                            table_setting(params), say)
            run.results.append(result)
            rate = "no rate" if result.rate is None else f"{result.rate:,.0f} conn/s"
            capacity = "-" if result.capacity is None or result.capacity.held is None else \
                f"{result.capacity.held:,} connections"
            say(f"repetition {repetition}/{experiment.repetitions}: IPv{family} establishment rate {rate}, "
                f"capacity {capacity} (limit: {result.limit.get('limit')})")
    return run
