"""The built-in demo: IPv4/IPv6 x 1/4 streams x firewall none/stateful, run through the same
experiment engine, store and report as any declared experiment."""

from __future__ import annotations

from linerate.experiment.config import Experiment


def demo_experiment(repetitions: int, duration_s: int, omit_s: int) -> Experiment:
    from linerate.experiment.config import parse_experiment

    return parse_experiment(
        f"""
        name = "demo"
        description = "built-in demo: IPv4/IPv6 x 1/4 streams x firewall none/stateful"
        repetitions = {int(repetitions)}
        duration_s = {int(duration_s)}
        omit_s = {int(omit_s)}
        [axes]
        family = [4, 6]
        streams = [1, 4]
        firewall = ["none", "stateful"]
        """,
        source="demo options",
    )
