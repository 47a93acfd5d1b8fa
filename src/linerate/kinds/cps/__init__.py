"""Connections per second through the DUT with real TCP stacks (test = "cps", and `linerate cps`):
h2load on the client opens connections at an open-loop rate, one HTTP/1.1 request each for a
fixed object from nginx on the server (RFC 9411 section 7.2: objects of 1, 16 and 64 KB), and a
search (kinds/cps/search.py) finds, per object size, the highest rate with fewer than 0.001% failed
connections — `repetitions` independent searches, reported as mean and 95% CI (kinds/cps/report.py)
with connect, first-byte and request times at the rate found.

A client has limits of its own — ephemeral ports held 60 s in TIME_WAIT, its CPU's pace — and so
has the server; each trial reads the facts that show them (kinds/cps/limits.py) and a trial they
explain is the client's or the server's, never the DUT's: the report says which, with the evidence
and what to change.

Modules: options.py (the file's keys), limits.py (client facts and the rule), search.py (the rate
search, pure), trial.py (one h2load run and what it stores), traffic/nginx_server.py (nginx through the server's
executor), run.py (rounds, storage, resume), report.py (md, json, csv).

The server comes from the testbed (Testbed.http_server(spec): a context manager giving a running
nginx with `url(object_bytes, family)`, `new_errors()` and `version`; traffic/nginx_server.py), the
DUT's state table from the testbed's driver (kinds/base.py state_counters), read around every trial.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from linerate.model import ONE_PAIR
from linerate.errors import ConfigError
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import RunContext
from linerate.kinds.base import plan_lines, refuse_throughput_keys
from linerate.kinds.cps import report
from linerate.kinds.cps.limits import DEFAULT_PORT_RANGE, TIME_WAIT_S
from linerate.kinds.cps.options import OPTION_KEYS, CpsOptions, parse_options
from linerate.kinds.cps.run import CpsRun, run_cps, search_plan
from linerate.store.db import ExperimentRow, Store
from linerate.traffic import h2load
from linerate.traffic.nginx import object_name



def options_of(experiment: Experiment) -> CpsOptions:
    return parse_options(experiment.options)


def stored_options(experiment: ExperimentRow) -> CpsOptions:
    """The options a stored experiment ran with (its config's `options`; defaults where absent)."""
    config = experiment.config if isinstance(experiment.config, dict) else {}
    try:
        return parse_options(config.get("options") or {})
    except ValueError:
        return CpsOptions()


class Cps:
    name = "cps"
    formats = ("md", "json", "csv")
    experiment_fields: tuple[str, ...] = ()
    compared_as = "connections/s, mean over repeated searches"
    bit_rate_samples = False

    def required_features(self, experiment: Experiment) -> set[str]:
        return {"binary h2load", "binary nginx", ONE_PAIR}
    option_keys = OPTION_KEYS

    def check(self, experiment: Experiment) -> None:
        refuse_throughput_keys(experiment, "cps", "family, object_sizes")
        options = options_of(experiment)
        first = h2load.pacing(options.start_rate)
        if first.per_period < options.threads:
            raise ValueError(f"threads = {options.threads}: h2load needs at least one new connection per thread "
                             f"and rate period; start_rate = {options.start_rate:g} gives {first.per_period}")

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        return {}  # what every cell carries beyond the file's: nothing

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """Every cell it may run (what the testbeds check before anything runs)."""
        return experiment.cells()

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        options = options_of(experiment)
        plan = search_plan(experiment, options)
        ports = DEFAULT_PORT_RANGE[1] - DEFAULT_PORT_RANGE[0] + 1
        lines = [f"experiment '{experiment.name}' (cps): {len(plan)} searches per repetition x "
                 f"{experiment.repetitions} = {len(plan) * experiment.repetitions} searches of "
                 f"{experiment.duration_s} s trials, {options.start_rate:g} to at most {options.max_rate:g} "
                 f"connections/s, passing below {report.percent(options.loss_target)} failed connections "
                 f"(h2load -> nginx on port {options.http_port}, the {options.closer} closes first)"]
        lines += plan_lines(experiment, plan, object_name)
        if options.closer == "client":
            lines.append(f"  note: a client with tcp_tw_reuse off and the default port range ({ports:,} ports) sustains "
                         f"about {ports // TIME_WAIT_S:,} connections/s from one address to one server port (the lab's "
                         "client has reuse on and ports 1024-65535); trials that run into it are reported as the "
                         "client's limit, not the DUT's")
        return lines

    def run(self, context: RunContext) -> CpsRun:
        options = context.settings if isinstance(context.settings, CpsOptions) else options_of(context.experiment)
        return run_cps(context, options)

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str:
        if fmt not in self.formats:
            raise ConfigError("--format", f"cps experiments report as {', '.join(self.formats)}")
        return report.render(store, experiment, fmt, stored_options(experiment).loss_target)

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        """For `compare`: every configuration (object size, family, lab axes) and its searches' rates."""
        found = report.groups(store, experiment.id)
        return [(key, json.loads(key)) for key in found], (lambda key: report.cps_values(found[key])), "connections/s"

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None:
        raise ConfigError("--plot", "a cps report has no plot yet; its table (--format md, json or csv) has the rates, "
                          "their intervals and the connect and first-byte times")


KIND = Cps()
