"""The built-in demo experiment: IPv4/IPv6 x 1/4 streams x firewall none/stateful."""

from __future__ import annotations

import statistics
from typing import TextIO

from linerate import preflight
from linerate.lab.lab import Lab, new_lab_id
from linerate.model import FirewallProfile, TrialParams
from linerate.report.layout import format_mbps, markdown_table, row_label
from linerate.topology.plan import LabSpec

FIREWALLS = ("none", "stateful")
CASES = ((4, 1), (6, 1), (4, 4), (6, 4))


def run_demo(repetitions: int, duration_s: int, omit_s: int, out: TextIO) -> int:
    from linerate.cli.options import as_option

    as_option(lambda: TrialParams(duration_s=duration_s, omit_s=omit_s))
    if repetitions < 1:
        from linerate.errors import ConfigError

        raise ConfigError("--repetitions", f"{repetitions} is out of range; use 1 or more")
    preflight.require(preflight.run_checks())
    results: dict[tuple[str, int, int], list] = {}
    for firewall in FIREWALLS:
        with Lab(LabSpec(new_lab_id(), FirewallProfile.parse(firewall))) as lab:
            for family, streams in CASES:
                params = TrialParams(family=family, streams=streams, duration_s=duration_s, omit_s=omit_s)
                for rep in range(repetitions):
                    trial = lab.run_trial(params)
                    results.setdefault((firewall, family, streams), []).append(trial)
                    print(f"  {firewall:8} {row_label(family, streams)} #{rep + 1}: "
                          f"{format_mbps(trial.throughput_bps) if trial.ok else 'FAILED ' + str(trial.error)}",
                          file=out, flush=True)
    rows = []
    for family, streams in CASES:
        cells = []
        for firewall in FIREWALLS:
            ok = [t for t in results[(firewall, family, streams)] if t.ok]
            if not ok:
                cells.append("failed")
                continue
            mean = statistics.fmean(t.throughput_bps for t in ok)
            retr = statistics.fmean(t.retransmits or 0 for t in ok)
            cells.append(f"{format_mbps(mean)} ({retr:.0f} retr)")
        rows.append((row_label(family, streams), cells))
    print(file=out)
    print(markdown_table("Demo (Mbit/s)", [f"firewall {f}" for f in FIREWALLS], rows), file=out)
    return 0
