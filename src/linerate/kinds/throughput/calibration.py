"""Generator calibration: is a number about the DUT, or about the test rig?

René Mayrhofer's 'Firewall throughput measurements: OPNsense on APU4d4, OPNsense in a Proxmox VM, and
OpenWRT on Turris Omnia' (https://www.mayrhofer.eu.org/post/firewall-throughput-opnsense-openwrt/)
measured a baseline "without any of these test systems in the routing path" first. We
do the same per lab shape (MTU, offloads) and traffic case: the same lab with no firewall, no
shaper, no netem — the rig's own ceiling. A trial is flagged "generator-bound" when its
throughput reaches >= 90% of that baseline, or its sender's CPU is >= 90%: then the figure
measures the client/server, not the DUT. Baselines are cached in the store per shape and machine.

The baseline is the *lowest* of CALIBRATION_TRIALS runs — what the rig delivers every time. An
unshaped veth lab varies by a third between runs on a small machine; a single baseline run that
happened to be fast would leave ordinary rig-bound trials unflagged.
"""

from __future__ import annotations

import dataclasses
import json
import platform
from collections.abc import Callable
from typing import Any

from linerate.axes import AXES, trial_params
from linerate.kinds.throughput.scheduler import LabFactory
from linerate.model import Trial
from linerate.store.db import Store
from linerate.traffic.iperf3 import SENDER_CPU_LIMIT_PCT

BASELINE_RATIO = 0.90
CALIBRATION_TRIALS = 3
GENERATOR_BOUND = "generator-bound"
SHAPE_AXES = ("mtu", "offloads", "family", "streams", "direction", "protocol", "udp_bitrate_bps",
              "congestion", "duration_s", "omit_s")


def baseline_lab_params(cell: dict[str, Any]) -> dict[str, Any]:
    lab = {name: axis.default for name, axis in AXES.items() if axis.scope == "lab"}
    lab.update(mtu=cell["mtu"], offloads=cell["offloads"], pairs=cell.get("pairs", 1))  # a pool's rig: all its pairs
    return lab


def shape_key(cell: dict[str, Any]) -> str:
    shape = {name: cell[name] for name in SHAPE_AXES}
    if cell.get("pairs", 1) > 1:
        shape["pairs"] = cell["pairs"]
    shape.update(kernel=platform.release(), machine=platform.node())
    return json.dumps(shape, sort_keys=True)


def sender_cpu(trial: Trial) -> float | None:
    if trial.params.direction == "forward":
        return trial.cpu_local_pct
    if trial.params.direction == "reverse":
        return trial.cpu_remote_pct
    present = [c for c in (trial.cpu_local_pct, trial.cpu_remote_pct) if c is not None]
    return max(present) if present else None


def flags_for(trial: Trial, baseline_bps: float | None) -> list[str]:
    if not trial.ok:
        return []
    cpu = sender_cpu(trial)
    if cpu is not None and cpu >= SENDER_CPU_LIMIT_PCT:
        return [GENERATOR_BOUND]
    if baseline_bps and trial.throughput_bps is not None and trial.throughput_bps >= BASELINE_RATIO * baseline_bps:
        return [GENERATOR_BOUND]
    return []


def calibrate(cells: list[dict[str, Any]], store: Store, lab_factory: LabFactory,
              on_message: Callable[[str], None] = lambda m: None) -> dict[str, float]:
    """shape key -> baseline bit/s; measures only shapes not cached in the store."""
    baselines: dict[str, float] = {}
    pending: dict[str, dict[str, Any]] = {}
    for cell in cells:
        key = shape_key(cell)
        cached = store.calibration(key)
        if cached is not None:
            baselines[key] = cached
        else:
            pending.setdefault(key, cell)
    by_lab: dict[str, list[tuple[str, dict]]] = {}
    for key, cell in pending.items():
        by_lab.setdefault(json.dumps(baseline_lab_params(cell), sort_keys=True), []).append((key, cell))
    for lab_json, items in by_lab.items():
        with lab_factory(json.loads(lab_json)) as lab:
            for key, cell in items:
                params = dataclasses.replace(trial_params(cell), latency=False)  # a baseline needs no probes
                trials = [lab.run_trial(params) for _ in range(CALIBRATION_TRIALS)]
                good = [t for t in trials if t.ok]
                if not good:
                    on_message(f"calibration failed ({trials[-1].error}); trials of this shape are not flagged")
                    continue
                lowest = min(good, key=lambda t: t.throughput_bps)
                baselines[key] = lowest.throughput_bps
                store.save_calibration(key, lowest.throughput_bps, sender_cpu(lowest))
                on_message(f"baseline IPv{cell['family']} P{cell['streams']} {cell['direction']} "
                           f"(no firewall, no shaper): lowest of {len(good)} runs "
                           f"{lowest.throughput_bps / 1e6:,.0f} Mbit/s")
    return baselines
