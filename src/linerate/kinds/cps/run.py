"""Running cps searches under the one runner: every combination of the lab's axes x family x
object size searched `repetitions` times, each repetition a whole, independent search
(kinds/cps/search.py) of trials (kinds/cps/trial.py) — in rounds, as rfc2544 runs them: repetition
r of every search before repetition r+1 of any, in an order shuffled per round from the
experiment's seed, so drift of the machine spreads over the configurations.

Storage: a search is a row of `searches` (params: test, object_bytes, family, repetition and the
lab's axes; goals: the options; library: LIBRARY; generator: "h2load 1.52.0"; results: its summary,
CpsResult.to_dict, when it ends), each trial a row of `search_trials` (kinds/cps/trial.py maps the
columns) and the figures that row has no column for — connect, first byte, request times, verdict,
limits, the client's port facts, the DUT's state table — a row of `cps_trials`, both committed in one
transaction the moment the trial ends. A resumed run finds the search by its params, replays its
trials through the search (deterministic) and measures only what is missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linerate.axes import lab_key
from linerate.dut.state_table import linger_seconds
from linerate.errors import LinerateError
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import Event, RunContext
from linerate.kinds.base import read_or_empty, rounds, search_pairs, state_counters, state_timeouts, testbeds_open
from linerate.kinds.cps.options import CpsOptions
from linerate.kinds.cps.report import dut_os
from linerate.kinds.cps.search import CLIENT, PASS, RateSearch
from linerate.kinds.cps.trial import FIGURES, CpsTrial, measure_trial
from linerate.store.db import Store
from linerate.traffic import h2load
from linerate.traffic.nginx import object_name
from linerate.traffic.nginx_server import ServerSpec

LIBRARY = "linerate cps 1 (doubling, then bisection)"


def search_plan(experiment: Experiment, options: CpsOptions) -> list[tuple[dict[str, Any], int, int]]:
    """(lab params, family, object size) of every search in one repetition."""
    return [(params, family, size) for params, family in search_pairs(experiment) for size in options.object_sizes]


def search_params(params: dict[str, Any], family: int, size: int, repetition: int) -> dict[str, Any]:
    return {"test": "cps", "object_bytes": size, "family": family, "repetition": repetition, **params}


@dataclass
class CpsResult:
    params: dict[str, Any]
    loss_target: float
    lower: float | None = None  # the highest rate that passed: the result
    upper: float | None = None  # the lowest that did not
    upper_verdict: str | None = None
    limit: str = "no lower bound"
    trials: list[CpsTrial] = field(default_factory=list)  # the search's
    latency: CpsTrial | None = None  # the trial at latency_load x the rate found, with the capture
    replayed: int = 0
    generator: str | None = None
    server: str | None = None
    bracket: tuple[float, float | None] | None = None  # where it started: the previous repetition's bounds

    @property
    def measured(self) -> int:
        return len(self.trials) + (self.latency is not None) - self.replayed

    @property
    def found(self) -> CpsTrial | None:
        """The trial that set the result: the last passing one at `lower`."""
        return next((t for t in reversed(self.trials) if t.verdict == PASS and t.rate == self.lower), None)

    def late_evidence(self) -> str | None:
        """Why the trial that set the upper bound failed although its connections completed."""
        bound = next((t for t in self.trials if t.rate == self.upper and t.verdict != PASS), None)
        return bound.late if bound is not None else None

    def limit_evidence(self) -> list[dict]:
        """The non-DUT limits of the trial that set the upper bound (what the report quotes)."""
        bound = next((t for t in self.trials if t.rate == self.upper and t.verdict != PASS), None)
        return list(bound.limits) if bound is not None else []

    def warnings(self) -> list[str]:
        """Limits seen in passing trials: the client was near its ports although the trial passed."""
        return sorted({limit["evidence"] for t in self.trials if t.verdict == PASS for limit in t.limits})

    def to_dict(self) -> dict[str, Any]:
        found = self.found
        return {"params": self.params, "cps": self.lower, "upper": self.upper, "upper_verdict": self.upper_verdict,
                "limit": self.limit, "limit_evidence": self.limit_evidence(), "late_evidence": self.late_evidence(),
                "warnings": self.warnings(),
                "loss_target": self.loss_target, "trials": len(self.trials), "replayed": self.replayed,
                "started_from": None if self.bracket is None else list(self.bracket),
                "generator": self.generator, "server": self.server,
                "at_cps": None if found is None else {
                    "connections": found.connections, "failed": found.failed, "timings": found.timings,
                    "request_percentiles": found.request_percentiles, "h2load_s": found.h2load_s},
                "latency": None if self.latency is None else {
                    "rate": self.latency.rate, "connections": self.latency.connections,
                    "failed": self.latency.failed, "verdict": self.latency.verdict, "capture": self.latency.capture,
                    "timings": self.latency.timings, "request_percentiles": self.latency.request_percentiles,
                    "notes": list(self.latency.notes)}}


SEARCH, LATENCY = "search", "latency"  # the purposes of a search's stored trials


def stored_trials(store: Store, row: Any) -> list[tuple[str, CpsTrial]]:
    """(purpose, trial) of every stored trial of the search, in order."""
    by_seq = store.search_trial_figures(row["id"], FIGURES)
    return [(r["purpose"], CpsTrial.from_stored(r, by_seq.get(r["seq"]))) for r in store.search_trials(row["id"])]


def search_object_size(store: Store, experiment_id: int, params: dict[str, Any], options: CpsOptions,
                       duration_s: float, measure: Callable[..., CpsTrial], *, generator: str | None = None,
                       server: str | None = None, on_trial: Callable[[CpsResult, CpsTrial, bool], None] | None = None,
                       bracket: tuple[float, float | None] | None = None) -> CpsResult:
    """One search: stored trials replayed, then measured until the search is done, then (with
    latency_load) one trial at that share of the rate found with the client's capture
    (measure(rate, capture=True)); every trial stored as it ends. A search already done is
    replayed whole, never measured again. bracket: (lower, upper) of the previous repetition of this
    search, where it starts (search.RateSearch); a resumed run derives it from the same stored trials."""
    row = store.ensure_search(experiment_id, params, options.goals(duration_s), LIBRARY)
    if generator:
        store.update_search(row["id"], generator=generator)
    search = RateSearch(options.start_rate, options.max_rate, options.relative_width,
                        pace=lambda rate: h2load.pacing(max(rate, 1.0)).rate_per_s, bracket=bracket)
    result = CpsResult(params, options.loss_target, generator=generator, server=server, bracket=bracket)
    stored_count = 0

    def stored(trial: CpsTrial, purpose: str) -> None:
        nonlocal stored_count
        store.add_search_trial(row["id"], stored_count, purpose, trial.to_record(), (FIGURES, trial.figures()))
        stored_count += 1

    for purpose, trial in stored_trials(store, row):
        stored_count += 1
        result.replayed += 1
        if purpose == LATENCY:
            result.latency = trial
            continue
        search.record(trial.rate, trial.verdict)
        result.trials.append(trial)
        if on_trial is not None:
            on_trial(result, trial, True)
    try:
        while (rate := search.next_rate()) is not None:
            trial = measure(rate)
            stored(trial, SEARCH)
            search.record(trial.rate, trial.verdict)
            result.trials.append(trial)
            if on_trial is not None:
                on_trial(result, trial, False)
        if options.latency_load and search.lower and result.latency is None:
            # h2load paces whole connections per second (traffic/h2load.py): a box found to hold under 2/s is
            # measured at 1/s, not refused after its search was done
            result.latency = measure(max(1.0, search.lower * options.latency_load), capture=True)
            stored(result.latency, LATENCY)
            if on_trial is not None:
                on_trial(result, result.latency, False)
    except Exception as exc:
        store.update_search(row["id"], status="failed", error=str(exc)[:500], ended_at=time.time())
        raise
    result.lower, result.upper, result.upper_verdict, result.limit = (search.lower, search.upper,
                                                                      search.upper_verdict, search.limit)
    store.update_search(row["id"], status="done", ended_at=time.time(), results=result.to_dict())
    return result


@dataclass
class CpsRun:
    experiment_id: int
    seed: int
    resumed: bool
    results: list[CpsResult] = field(default_factory=list)

    @property
    def trials_measured(self) -> int:
        return sum(r.measured for r in self.results)

    def summary(self, where: str) -> str:
        client_bound = sum(1 for r in self.results if r.limit == "client" or r.upper_verdict == CLIENT)
        note = f"; {client_bound} bounded by the client, not the DUT (see the report)" if client_bound else ""
        return (f"{len(self.results)} cps searches ({self.trials_measured} trials measured) into {where}, experiment "
                f"{self.experiment_id}{' (resumed)' if self.resumed else ''}, seed {self.seed}{note}")


def _version(executor: Any, argv: list[str], parse: Callable[[str], str | None]) -> str | None:
    try:
        out = executor.run(argv, timeout_s=15, check=False)
    except LinerateError:
        return None
    return parse(out.stdout + out.stderr)


STATE_SLACK = 16  # entries above the search's starting count that still count as drained (ARP, DNS, the probes)
FULL_SHARE = 0.9  # leftover states plus a trial's connections above this share of the limit: wait


def settle_state(read_state: Callable[[], dict[str, int]], baseline: int | None, connections: int, limit_s: float,
                 sleep: Callable[[float], None], clock: Callable[[], float] = time.monotonic) -> str | None:
    """Before a trial of `connections` connections: while the states the earlier trials left (above the
    search's starting count) would take the table past FULL_SHARE of its limit with this trial's, wait
    for them to expire, at most limit_s (the time a closed connection's state lingers) — a trial must
    not fail for the last one's closed connections (RFC 9411 measures each rate on its own). A table
    with room, or one whose size or limit is not read, costs no wait. A note when it waited or gave up."""
    if baseline is None:
        return None
    started = clock()
    while True:
        state = read_state()
        count, limit = state.get("state_count"), state.get("state_max")
        waited = clock() - started
        if count is None or not limit or count <= baseline + STATE_SLACK or count + connections <= FULL_SHARE * limit:
            return f"waited {waited:.0f} s for the DUT's state table to drain" if waited >= 1 else None
        if waited >= limit_s:
            return (f"the DUT's state table still held {count:,} of {limit:,} entries ({baseline:,} when the search "
                    f"began) after {waited:.0f} s; this trial started with them")
        sleep(1.0)


def run_cps(context: RunContext, options: CpsOptions, *, sleep: Callable[[float], None] = time.sleep) -> CpsRun:
    experiment = context.experiment
    run = CpsRun(context.experiment_id, context.seed, context.resumed)
    plan = search_plan(experiment, options)
    say = lambda text: context.on_event(Event("message", message=text))  # noqa: E731

    def on_trial(result: CpsResult, trial: CpsTrial, replayed: bool) -> None:
        name = object_name(result.params['object_bytes'])
        if trial is result.latency:
            ttfb = trial.capture.get("ttfb") or {}
            times = (f"TTFB p50 {ttfb['p50'] * 1000:.2f} ms, p99 {ttfb['p99'] * 1000:.2f} ms" if ttfb else
                     "; ".join(trial.notes[-1:]) or "no capture")
            say(f"  {name}: latency trial at {trial.rate:,.0f} conn/s ({options.latency_load:g} x the rate found): "
                f"{trial.succeeded:,}/{trial.connections:,} ok, {times}")
            return
        say(f"  {name}: {'replayed' if replayed else 'measured'} {trial.rate:,.0f} conn/s: {trial.succeeded:,}/"
            f"{trial.connections:,} ok, {trial.failed:,} failed -> {trial.verdict}")

    with testbeds_open(context, [params for params, _ in search_pairs(experiment)]) as beds, \
            contextlib.ExitStack() as stack:
        servers, versions, timeouts, baselines, lingers = {}, {}, {}, {}, {}
        os_name = dut_os(context.store.experiment(context.experiment_id))
        for key in beds:
            families = tuple(sorted({f for p, f in search_pairs(experiment) if lab_key(p) == key}))
            spec = ServerSpec(options.object_sizes, options.http_port, families, options.server_workers,
                              server_closes=options.closer == "server")
            servers[key] = stack.enter_context(beds[key].http_server(spec))
            timeouts[key] = read_or_empty(state_timeouts(beds[key]))()
            baselines[key] = read_or_empty(state_counters(beds[key]))().get("state_count")
            lingers[key] = linger_seconds(os_name, timeouts[key]) + 5
            version = _version(beds[key].executor("client"), h2load.version_argv(), h2load.parse_version)
            versions[key] = f"h2load {version}" if version else "h2load"
        found: dict[tuple, CpsResult] = {}  # the latest repetition of each search: where the next one starts
        for repetition, (params, family, size) in rounds(plan, experiment.repetitions, context.seed):
            key = lab_key(params)
            before = found.get((key, family, size))
            bed, server = beds[key], servers[key]
            client, url = bed.executor("client"), server.url(size, family)

            read_state = read_or_empty(state_counters(bed), "the DUT's state table")
            read_dut = read_or_empty(bed.dut_counters, "the DUT's counters")
            linger = lingers[key]

            def measure(rate: float, capture: bool = False) -> CpsTrial:
                read_state.take_missing(), read_dut.take_missing()
                trial = measure_trial(client, server, url, rate, float(experiment.duration_s), options,
                                      read_dut=read_dut, read_state=read_state,
                                      state_timeouts=timeouts[key], sleep=sleep, capture=capture,
                                      settle=lambda n: settle_state(read_state, baselines[key], n, linger, sleep))
                missing = read_dut.take_missing() + read_state.take_missing()
                return dataclasses.replace(trial, notes=(*trial.notes, *(
                    f"telemetry partial: {m}" for m in missing))) if missing else trial

            bed.apply_knobs()  # real hosts: this combination's DUT knobs (journaled), before its search

            result = search_object_size(
                context.store, context.experiment_id, search_params(params, family, size, repetition), options,
                float(experiment.duration_s), measure, generator=versions[key],
                server=f"nginx {server.version}" if server.version else "nginx", on_trial=on_trial,
                bracket=None if before is None or before.lower is None else (before.lower, before.upper))
            run.results.append(result)
            found[(key, family, size)] = result
            rate = "no rate passed" if result.lower is None else f"{result.lower:,.0f} conn/s"
            say(f"repetition {repetition}/{experiment.repetitions}: IPv{family} {object_name(size)} {rate} "
                f"(limit: {result.limit}; {result.measured} trials measured, "
                f"{result.replayed} replayed)")
    return run
