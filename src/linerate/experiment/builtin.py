"""The built-in demos, run through the same experiment engine, store and report as any declared
experiment:
- vm: the question of Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated) — virtio
  offloads on/off x 1/8 streams through a 2-vCPU, 2-queue guest on an emulated 1 Gbit/s link, where
  the guest's CPUs, not the generator, are the limit. 8 streams, not 4: the host's tap picks a
  guest queue per flow by hash, so 4 flows all land on one of the 2 queues in 1 trial of 8 (seen:
  2 of 10 trials at ~255 Mbit/s beside ~350-425), a bimodal cell; 8 flows do so in 1 of 128
  (6 trials: CV 5.4% vs 14.8% with 4, issue #25);
- namespace: IPv4/IPv6 x 1/4 streams x firewall none/stateful in the namespace lab (the DUT is
  this machine's own kernel, so its cells are generator-bound)."""

from __future__ import annotations

import json

from linerate.experiment.config import Experiment, parse_experiment

TABLES = {
    "namespace": """
        [axes]
        family = [4, 6]
        streams = [1, 4]
        firewall = ["none", "stateful"]
        """,
    "vm": """
        [axes]
        streams = [1, 8]
        virtio_offloads = ["on", "off"]
        [fixed]
        dut = "vm"
        dut_vcpus = 2
        virtio_queues = 2
        link_rate = "1g"
        """,
}
DESCRIPTIONS = {
    "namespace": "built-in demo: IPv4/IPv6 x 1/4 streams x firewall none/stateful",
    "vm": "built-in demo: VM DUT (2 vCPUs, 2 queues, 1 Gbit/s link), virtio offloads on/off x 1/8 streams",
}


# On a host where the generator and the guest share CPUs (vm/placement.py), a guest-bound cell
# varies 7-15% between 3-s trials (measured on the 2-core development machine, issue #25): three
# trials give a CI wider than a sixth of the mean. The VM demo repeats each cell until its 95% CI
# half-width is within 10% of its mean (at least `repetitions`, at most VM_MAX_REPETITIONS).
VM_PRECISION = 0.10
VM_MAX_REPETITIONS = 10
SHAPES = {  # name, default trial seconds, adaptive repetitions
    "namespace": ("demo", 2, False),
    "vm": ("demo-vm", 3, True),
}


def demo_experiment(repetitions: int, duration_s: int | None, omit_s: int, dut: str = "namespace",
                    image: dict[str, str] | None = None) -> Experiment:
    """`image`: dut_image, dut_os (and the login axes) of an own image for the VM demo's DUT."""
    name, default_duration_s, adaptive = SHAPES[dut]
    own = "".join(f"{key} = {json.dumps(value)}\n        " for key, value in (image or {}).items() if value)
    precision = (f"precision = {VM_PRECISION}\nmin_repetitions = {max(2, int(repetitions))}\n"
                 f"max_repetitions = {max(VM_MAX_REPETITIONS, int(repetitions))}") if adaptive else ""
    return parse_experiment(
        f"""
        name = "{name}"
        description = "{DESCRIPTIONS[dut]}"
        repetitions = {int(repetitions)}
        duration_s = {int(default_duration_s if duration_s is None else duration_s)}
        omit_s = {int(omit_s)}
        {precision}
        {TABLES[dut]}
        {own}""",
        source="demo options",
    )
