"""RFC 2544 throughput per frame size (test = "rfc2544", and `linerate rfc2544`): every combination of
the lab's axes x family x frame size searched `repetitions` times, each repetition a whole,
independent MLRsearch (search.py here) through the testbed's packet path, so NDR and PDR get a
mean and a 95% interval and two configurations can be compared with Welch's test.

Rounds, as the throughput scheduler runs them: repetition r of every search before repetition r+1
of any, in an order shuffled per round from the experiment's seed, with every lab combination up
for the whole run — drift of the machine spreads over the configurations instead of landing on
one. A resumed run finds the same order again; a finished search is replayed from the store
(MLRsearch is deterministic given the same trial results), a half-finished one continues where it
stopped.

The kind's home: its search (search.py, over search/'s shared measurer), its reports (report.py:
summaries, md/csv/json; table.py: `linerate rfc2544`'s table; html.py; plot.py). Found by name
through experiment/registry.py; only cli/ imports these modules directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linerate.model import ONE_PAIR
from linerate.axes import lab_key
from linerate.errors import ConfigError
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import Event, RunContext
from linerate.kinds.base import plan_lines, refuse_throughput_keys, rounds, search_pairs, testbeds_open
from linerate.kinds.rfc2544.html import render_search_report
from linerate.kinds.rfc2544.report import SERIALIZERS, ndr_values, search_groups, summarize_searches
from linerate.kinds.rfc2544.search import SearchSettings, search_frame_size
from linerate.report.layout import format_fps
from linerate.search.frame_path import check_frame_for
from linerate.store.db import ExperimentRow, Store
from linerate.traffic import iperf3_udp
from linerate.traffic.frames import label as frame_label
from linerate.traffic.trafgen import default_frame_sizes


def frame_sizes_for(experiment: Experiment, family: int) -> list[int | str]:
    """The file's frame sizes for one family (RFC 2544's seven by default; IPv6's smallest is 66, the
    least that carries its headers)."""
    if experiment.frame_sizes is not None:
        return list(experiment.frame_sizes)
    return default_frame_sizes(family, iperf3_udp.min_frame(family) if experiment.generator == "iperf3" else None)


def search_plan(experiment: Experiment, sizes_for=None) -> list[tuple[dict[str, Any], int, int | str]]:
    """(lab params, family, frame size) of every search in one repetition, in declaration order.
    sizes_for(params, family): the sizes of one combination (default: the file's, else RFC 2544's)."""
    sizes_for = sizes_for or (lambda params, family: frame_sizes_for(experiment, family))
    return [(params, family, size) for params, family in search_pairs(experiment)
            for size in sizes_for(params, family)]


@dataclass
class SearchRun:
    experiment_id: int
    seed: int
    resumed: bool
    results: list[Any] = field(default_factory=list)  # FrameResult, in run order
    descriptions: dict[tuple, str] = field(default_factory=dict)  # lab key -> its testbed's description
    generators: set[str] = field(default_factory=set)
    @property
    def trials_measured(self) -> int:
        return sum(r.measured for r in self.results)

    def summary(self, where: str) -> str:
        return (f"{len(self.results)} searches ({self.trials_measured} trials measured) into {where}, experiment "
                f"{self.experiment_id}{' (resumed)' if self.resumed else ''}, seed {self.seed}")


class Rfc2544:
    name = "rfc2544"
    formats = ("md", "csv", "json", "html")
    experiment_fields = ("frame_sizes", "pdr_loss", "relative_width", "generator")  # shared Experiment fields only it reads
    compared_as = "NDR frames/s, mean over repeated searches"
    bit_rate_samples = False

    def required_features(self, experiment: Experiment) -> set[str]:
        """trafgen when the file asks for it; with auto the client falls back to iperf3 UDP."""
        return {ONE_PAIR} | ({"binary trafgen"} if experiment.generator == "trafgen" else set())
    option_keys: tuple[str, ...] = ()  # top-level keys of its own (beyond Experiment's fields)

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        return {}  # what every cell carries beyond the file's: nothing

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """Every cell it may run (what the testbeds check before anything runs)."""
        return experiment.cells()

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        """--dry-run: every search of one repetition (IPv4 64 B, firewall none ...)."""
        plan = search_plan(experiment)
        lines = [f"experiment '{experiment.name}' (rfc2544): {len(plan)} searches per repetition x "
                 f"{experiment.repetitions} = {len(plan) * experiment.repetitions} searches of "
                 f"{experiment.duration_s} s trials"]
        return lines + plan_lines(experiment, plan, frame_label)

    def check(self, experiment: Experiment) -> None:
        refuse_throughput_keys(experiment, "rfc2544", "family, frame_sizes", pools=True)
        for family in {cell["family"] for cell in experiment.cells()}:
            for size in frame_sizes_for(experiment, family):
                try:
                    check_frame_for(size, family, experiment.generator, "frame_sizes")
                except ConfigError as exc:
                    raise ValueError(f"frame_sizes: {exc.problem}") from None
        if experiment.frame_sizes is not None and len(set(experiment.frame_sizes)) != len(experiment.frame_sizes):
            raise ValueError("frame_sizes lists a size twice")

    def run(self, context: RunContext) -> SearchRun:
        experiment = context.experiment
        settings = context.settings or SearchSettings(float(experiment.duration_s), experiment.pdr_loss,
                                                         experiment.relative_width)
        run = SearchRun(context.experiment_id, context.seed, context.resumed)

        def on_trial(result, trial, replayed: bool) -> None:
            load = "unpaced" if trial.intended_load_fps is None else f"{trial.intended_load_fps:,.0f} fps"
            context.on_event(Event("message", message=(
                f"  {frame_label(result.frame_bytes)}: {'replayed' if replayed else 'measured'} {load}: sent "
                f"{trial.sent:,}, forwarded {trial.forwarded:,}, DUT loss {trial.dut_loss:,}, unsent {trial.unsent:,}")))

        with testbeds_open(context, [params for params, _ in search_pairs(experiment)]) as testbeds:

            def sizes_for(params: dict[str, Any], family: int) -> list[int | str]:
                if experiment.frame_sizes is not None:
                    return list(experiment.frame_sizes)
                # RFC 2544's sizes down to what this client's sender makes (auto may fall back to iperf3)
                return testbeds[lab_key(params)].packet_path(family, experiment.generator).default_frame_sizes()

            plan = search_plan(experiment, sizes_for)
            for repetition, (params, family, size) in rounds(plan, experiment.repetitions, context.seed):
                testbed = testbeds[lab_key(params)]
                with testbed.packet_path(family, experiment.generator) as path:
                    path.check(size)  # what this client's sender can make (auto may have fallen back)
                    result = search_frame_size(
                        path, context.store, context.experiment_id,
                        {"frame_bytes": size, "family": family, "repetition": repetition, **params},
                        settings, on_trial=on_trial)
                    run.descriptions[lab_key(params)] = path.description
                    run.generators.add(path.generator)
                run.results.append(result)
                context.on_event(Event("message", message=(
                    f"repetition {repetition}/{experiment.repetitions}: IPv{result.family} "
                    f"{frame_label(result.frame_bytes)} NDR {format_fps(result.ndr_fps)} fps "
                    f"({result.measured} new trials, {len(result.trials) - result.measured} from the store)")))
        return run

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str:
        if fmt == "html":
            return render_search_report(store, experiment)
        return SERIALIZERS[fmt](experiment, summarize_searches(store, experiment.id))

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        """For `compare`: every configuration (lab axes, family, frame size) and its searches' NDRs."""
        groups = search_groups(store, experiment.id)
        return [(key, json.loads(key)) for key in groups], (lambda key: ndr_values(groups[key])), "frames/s"

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None:
        from linerate.kinds.rfc2544.plot import write_frame_size_png  # matplotlib: off the start-up path

        write_frame_size_png(experiment, summarize_searches(store, experiment.id), path)


KIND = Rfc2544()
